//! The learning half of Malcolm's own strategy (seed 004 §5-6): decentralized actor-critic over
//! the nodes of one rack, each node an agent with its own critic and two actors (migration and
//! work stealing), trained on heartbeat intervals and kept in agreement by consensus.
//!
//! - State: the nodes' loads `x` (expected wait, in mean service times), as the heartbeats carry
//!   them; the features use `x̂ = x / (x + X_HALF)` (`X_HALF` = 4), which keeps the powers in
//!   [0, 1) while still growing with the load (a clip at a maximum made every overloaded node
//!   look alike, and the actors learned to send everything to one).
//! - Critic (§6.2): linear, `V(x) = <phi_c(x), theta>` with `phi_c` = 1, `x̂_i .. x̂_i^4` and
//!   `x̂_i x̂_j` (i < j).
//! - Actors (§6.2): softmax over the rack's nodes, linear in `phi_a(x)` = 1, `x̂_i` and
//!   `ln(rank of x_i)`; one weight column per action. Migration: action `i` (the node's own) keeps
//!   the task, `j` sends it to node `j`. Stealing: `i` steals nothing, `j` asks node `j` for a task.
//! - Utility (eq. 1): `-(1/n^2) sum_ij (x̂_i - x̂_j)^2 - cost * (migrations + steals)` of the
//!   interval (the paper's sum over pairs, scaled by `n^2` so that `cost` does not depend on the
//!   rack's size).
//! - Algorithm 1: at each heartbeat every agent takes the TD error
//!   `delta = u + gamma V(x') - V(x)` with its own critic and accumulates `delta phi_c(x)` and, for
//!   the actions it took, `delta grad log pi` (closed form: `phi_a (counts - k pi)`, `k` the
//!   actions); after `batch` heartbeats (a mini-batch, 20) it applies them with AdamW; after every
//!   `consensus` updates (100) the critics are averaged.
//!
//! Choices where the text is open (`docs/simulator.md`): the feature scaling above; the initial
//! weights uniform in +-0.01 (the paper: "randomly"), except that the actors' own-action bias
//! starts each node keeping its tasks and stealing nothing with probability `keep` (0.9), so that
//! an untrained rack behaves nearly as RAND rather than scattering its tasks; the learning rates
//! (the paper tunes them, §8: critic 0.01, actors 0.0003, which learns Malcolm's testbed in about
//! 5,000 updates, 10 s of heartbeats, where 0.001 and more drove the actors to extremes first);
//! the probabilities are recomputed at each heartbeat and fixed in between (§6.1).

use rand::Rng;

/// The load (in mean service times) whose scaled value is one half.
pub const X_HALF: f64 = 4.0;

/// The learning parameters (Malcolm's defaults where it gives them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LearnParams {
    pub critic_lr: f64,
    pub actor_lr: f64,
    pub gamma: f64,
    /// Cost of one migration or steal, in units of the utility's imbalance term.
    pub cost: f64,
    /// Heartbeat intervals per mini-batch (20).
    pub batch: u32,
    /// Updates between consensus steps (100).
    pub consensus: u32,
    pub weight_decay: f64,
    /// An untrained node's probability of keeping a task, and of not stealing.
    pub keep: f64,
}

impl LearnParams {
    /// The learning parameters of a `malcolm` policy spec, checked (with its heartbeat period:
    /// a learner steps at every heartbeat, so one of a nanosecond would all but stop a run).
    pub fn of(spec: &super::PolicySpec) -> anyhow::Result<Self> {
        // Each parameter's range is its kind's (the registry); what is left are the open ends
        // and the period a learner can step at.
        let get = |n: &str| spec.param(n).unwrap_or(f64::NAN);
        let p = Self {
            critic_lr: get("critic_lr"),
            actor_lr: get("actor_lr"),
            gamma: get("gamma"),
            cost: get("cost"),
            batch: get("batch") as u32,
            consensus: get("consensus") as u32,
            weight_decay: get("weight_decay"),
            keep: get("keep"),
        };
        anyhow::ensure!(
            get("period_us") >= 1.0,
            "malcolm: period_us must be at least 1, got {}",
            get("period_us")
        );
        anyhow::ensure!(
            (0.0..1.0).contains(&p.gamma),
            "malcolm: gamma must be in [0, 1), got {}",
            p.gamma
        );
        anyhow::ensure!(
            p.keep > 0.0 && p.keep < 1.0,
            "malcolm: keep must be between 0 and 1, got {}",
            p.keep
        );
        Ok(p)
    }
}

/// AdamW (Loshchilov and Hutter) moments of one parameter vector, stepping up the gradient.
#[derive(Clone, Debug)]
struct AdamW {
    m: Vec<f64>,
    v: Vec<f64>,
    t: i32,
}

impl AdamW {
    const B1: f64 = 0.9;
    const B2: f64 = 0.999;
    const EPS: f64 = 1e-8;

    fn new(n: usize) -> Self {
        Self {
            m: vec![0.0; n],
            v: vec![0.0; n],
            t: 0,
        }
    }

    /// One ascent step along `g` (the mean gradient of the mini-batch), with decoupled weight decay.
    fn step(&mut self, params: &mut [f64], g: &[f64], lr: f64, decay: f64) {
        self.t += 1;
        let (c1, c2) = (1.0 - Self::B1.powi(self.t), 1.0 - Self::B2.powi(self.t));
        for i in 0..params.len() {
            self.m[i] = Self::B1 * self.m[i] + (1.0 - Self::B1) * g[i];
            self.v[i] = Self::B2 * self.v[i] + (1.0 - Self::B2) * g[i] * g[i];
            let (m, v) = (self.m[i] / c1, self.v[i] / c2);
            params[i] += lr * (m / (v.sqrt() + Self::EPS) - decay * params[i]);
        }
    }
}

/// The critic's features of scaled loads `xs`.
pub fn critic_features(xs: &[f64], out: &mut Vec<f64>) {
    out.clear();
    out.push(1.0);
    for &x in xs {
        out.extend([x, x * x, x * x * x, x * x * x * x]);
    }
    for i in 0..xs.len() {
        for j in i + 1..xs.len() {
            out.push(xs[i] * xs[j]);
        }
    }
}

/// The actors' features of loads `x` (scaled `xs`): 1, each scaled load, each ln(rank).
pub fn actor_features(x: &[f64], xs: &[f64], out: &mut Vec<f64>) {
    out.clear();
    out.push(1.0);
    out.extend_from_slice(xs);
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]).then(a.cmp(&b)));
    let base = out.len();
    out.resize(base + x.len(), 0.0);
    for (rank, &i) in order.iter().enumerate() {
        out[base + i] = ((rank + 1) as f64).ln();
    }
}

/// Scaled loads for the features: `x / (x + X_HALF)`, increasing, in [0, 1).
pub fn scaled(x: &[f64]) -> Vec<f64> {
    x.iter()
        .map(|&v| v.max(0.0) / (v.max(0.0) + X_HALF))
        .collect()
}

/// A softmax policy over `actions`, linear in the actor features: `w[f * actions + a]`.
#[derive(Clone, Debug)]
struct Actor {
    actions: usize,
    w: Vec<f64>,
    grad: Vec<f64>,
    adam: AdamW,
    /// The probabilities for the current interval.
    probs: Vec<f64>,
    /// Actions taken in the current interval, by action.
    counts: Vec<u32>,
}

impl Actor {
    fn new(features: usize, actions: usize, own: usize, keep: f64, rng: &mut impl Rng) -> Self {
        let mut w: Vec<f64> = (0..features * actions)
            .map(|_| rng.random_range(-0.01..0.01))
            .collect();
        if actions > 1 {
            // Feature 0 is the constant: the own action's bias sets its initial probability.
            w[own] += (keep / (1.0 - keep) * (actions - 1) as f64).ln();
        }
        Self {
            actions,
            grad: vec![0.0; w.len()],
            adam: AdamW::new(w.len()),
            w,
            probs: vec![1.0 / actions as f64; actions],
            counts: vec![0; actions],
        }
    }

    fn set_probs(&mut self, phi: &[f64]) {
        let a = self.actions;
        let mut logits = vec![0.0; a];
        for (f, &p) in phi.iter().enumerate() {
            if p != 0.0 {
                for (l, w) in logits.iter_mut().zip(&self.w[f * a..(f + 1) * a]) {
                    *l += p * w;
                }
            }
        }
        let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = logits.iter().map(|l| (l - max).exp()).sum();
        for (p, l) in self.probs.iter_mut().zip(&logits) {
            *p = (l - max).exp() / sum;
        }
    }

    /// Adds `delta` times the gradient of the log-probability of this interval's actions.
    fn accumulate(&mut self, phi: &[f64], delta: f64) {
        let k: u32 = self.counts.iter().sum();
        if k == 0 {
            return;
        }
        let a = self.actions;
        let coef: Vec<f64> = (0..a)
            .map(|i| delta * (f64::from(self.counts[i]) - f64::from(k) * self.probs[i]))
            .collect();
        for (f, &p) in phi.iter().enumerate() {
            if p != 0.0 {
                for (g, c) in self.grad[f * a..(f + 1) * a].iter_mut().zip(&coef) {
                    *g += p * c;
                }
            }
        }
    }

    fn draw(&self, u: f64) -> usize {
        let mut acc = 0.0;
        for (i, p) in self.probs.iter().enumerate() {
            acc += p;
            if u < acc {
                return i;
            }
        }
        self.actions - 1
    }
}

/// One node's learner.
#[derive(Clone, Debug)]
struct Agent {
    theta: Vec<f64>,
    grad: Vec<f64>,
    adam: AdamW,
    migrate: Actor,
    steal: Actor,
}

impl Agent {
    fn value(&self, phi: &[f64]) -> f64 {
        self.theta.iter().zip(phi).map(|(t, p)| t * p).sum()
    }
}

/// The learners of one rack's `n` nodes.
#[derive(Clone, Debug)]
pub struct Learner {
    params: LearnParams,
    agents: Vec<Agent>,
    /// The state at the last heartbeat (scaled), its features.
    xs: Vec<f64>,
    phi_c: Vec<f64>,
    phi_a: Vec<f64>,
    started: bool,
    points: u32,
    pub updates: u64,
}

impl Learner {
    pub fn new(n: usize, params: LearnParams, rng: &mut impl Rng) -> Self {
        let critic = 1 + 4 * n + n * n.saturating_sub(1) / 2;
        let actor = 1 + 2 * n;
        let agents = (0..n)
            .map(|i| Agent {
                theta: (0..critic).map(|_| rng.random_range(-0.01..0.01)).collect(),
                grad: vec![0.0; critic],
                adam: AdamW::new(critic),
                migrate: Actor::new(actor, n, i, params.keep, rng),
                steal: Actor::new(actor, n, i, params.keep, rng),
            })
            .collect();
        let mut l = Self {
            params,
            agents,
            xs: Vec::new(),
            phi_c: Vec::new(),
            phi_a: Vec::new(),
            started: false,
            points: 0,
            updates: 0,
        };
        // Until the first heartbeat: the bias alone.
        let mut phi = vec![0.0; actor];
        phi[0] = 1.0;
        for a in &mut l.agents {
            a.migrate.set_probs(&phi);
            a.steal.set_probs(&phi);
        }
        l
    }

    /// Node `i`'s migration choice for a task, from a uniform draw `u`: itself (keep) or another
    /// node.
    pub fn migration(&mut self, i: usize, u: f64) -> usize {
        let a = self.agents[i].migrate.draw(u);
        self.agents[i].migrate.counts[a] += 1;
        a
    }

    /// Node `i`'s stealing choice after a completion: itself (none) or the node to ask.
    pub fn steal(&mut self, i: usize, u: f64) -> usize {
        let a = self.agents[i].steal.draw(u);
        self.agents[i].steal.counts[a] += 1;
        a
    }

    /// A node's choice in this interval was undone (its target could not take it): it counts as
    /// the own action.
    pub fn retract_migration(&mut self, i: usize, a: usize) {
        let c = &mut self.agents[i].migrate.counts;
        c[a] -= 1;
        c[i] += 1;
    }

    /// As [`Learner::retract_migration`], for a steal that could not be sent.
    pub fn retract_steal(&mut self, i: usize, a: usize) {
        let c = &mut self.agents[i].steal.counts;
        c[a] -= 1;
        c[i] += 1;
    }

    /// A heartbeat with loads `x` (in mean service times) ends the interval: the data point
    /// (last state, the interval's actions, `x`) trains every agent, and the next interval's
    /// probabilities come from `x`.
    pub fn heartbeat(&mut self, x: &[f64]) {
        let n = self.agents.len();
        assert_eq!(x.len(), n);
        let xs = scaled(x);
        let mut phi_c = Vec::new();
        critic_features(&xs, &mut phi_c);
        let mut phi_a = Vec::new();
        actor_features(x, &xs, &mut phi_a);
        if self.started {
            let p = self.params;
            let mut imbalance = 0.0;
            for i in 0..n {
                for j in 0..n {
                    imbalance += (self.xs[i] - self.xs[j]).powi(2);
                }
            }
            let actions: u32 = self
                .agents
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    let moved = |c: &[u32]| c.iter().sum::<u32>() - c[i];
                    moved(&a.migrate.counts) + moved(&a.steal.counts)
                })
                .sum();
            let u = -imbalance / (n * n) as f64 - p.cost * f64::from(actions);
            for a in &mut self.agents {
                let delta = u + p.gamma * a.value(&phi_c) - a.value(&self.phi_c);
                for (g, f) in a.grad.iter_mut().zip(&self.phi_c) {
                    *g += delta * f;
                }
                a.migrate.accumulate(&self.phi_a, delta);
                a.steal.accumulate(&self.phi_a, delta);
            }
            self.points += 1;
            if self.points == p.batch {
                self.update();
            }
        }
        for a in &mut self.agents {
            a.migrate.counts.fill(0);
            a.steal.counts.fill(0);
            a.migrate.set_probs(&phi_a);
            a.steal.set_probs(&phi_a);
        }
        self.xs = xs;
        self.phi_c = phi_c;
        self.phi_a = phi_a;
        self.started = true;
    }

    /// Applies a mini-batch's gradients; every `consensus` updates, averages the critics.
    fn update(&mut self) {
        let p = self.params;
        let scale = 1.0 / f64::from(self.points);
        for a in &mut self.agents {
            let g: Vec<f64> = a.grad.iter().map(|g| g * scale).collect();
            a.adam.step(&mut a.theta, &g, p.critic_lr, p.weight_decay);
            a.grad.fill(0.0);
            for actor in [&mut a.migrate, &mut a.steal] {
                let g: Vec<f64> = actor.grad.iter().map(|g| g * scale).collect();
                actor
                    .adam
                    .step(&mut actor.w, &g, p.actor_lr, p.weight_decay);
                actor.grad.fill(0.0);
            }
        }
        self.points = 0;
        self.updates += 1;
        if self.updates % u64::from(p.consensus.max(1)) == 0 {
            self.consensus();
        }
    }

    /// Every agent's critic becomes the mean of all of them.
    fn consensus(&mut self) {
        let n = self.agents.len() as f64;
        let mut mean = vec![0.0; self.agents[0].theta.len()];
        for a in &self.agents {
            for (m, t) in mean.iter_mut().zip(&a.theta) {
                *m += t / n;
            }
        }
        for a in &mut self.agents {
            a.theta.copy_from_slice(&mean);
        }
    }

    /// Node `i`'s migration probabilities for the current interval.
    pub fn migration_probs(&self, i: usize) -> &[f64] {
        &self.agents[i].migrate.probs
    }

    /// Node `i`'s stealing probabilities for the current interval.
    pub fn steal_probs(&self, i: usize) -> &[f64] {
        &self.agents[i].steal.probs
    }

    /// Node `i`'s critic's value of loads `x`.
    pub fn value(&self, i: usize, x: &[f64]) -> f64 {
        let mut phi = Vec::new();
        critic_features(&scaled(x), &mut phi);
        self.agents[i].value(&phi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Stream, stream};

    fn params() -> LearnParams {
        LearnParams {
            critic_lr: 0.05,
            actor_lr: 0.01,
            gamma: 0.5,
            cost: 0.0,
            batch: 1,
            consensus: 1_000_000,
            weight_decay: 0.0,
            keep: 0.9,
        }
    }

    #[test]
    fn features_are_the_papers() {
        let x = [3.0, 0.0, 1.0];
        let xs = scaled(&x);
        assert_eq!(xs, [3.0 / 7.0, 0.0, 0.2]);
        let mut c = Vec::new();
        critic_features(&xs, &mut c);
        // 1, four powers of each, each pair's product.
        assert_eq!(c.len(), 1 + 4 * 3 + 3);
        assert_eq!(
            c[1..5],
            [xs[0], xs[0].powi(2), xs[0].powi(3), xs[0].powi(4)]
        );
        assert_eq!(c[13..], [xs[0] * xs[1], xs[0] * xs[2], xs[1] * xs[2]]);
        let mut a = Vec::new();
        actor_features(&x, &xs, &mut a);
        // 1, the scaled loads, ln of each load's rank (1 the lowest).
        assert_eq!(a[..4], [1.0, xs[0], xs[1], xs[2]]);
        assert_eq!(a[4..], [3f64.ln(), 0.0, 2f64.ln()]);
    }

    #[test]
    fn the_actors_gradient_is_that_of_the_log_probability_of_the_actions_taken() {
        let mut rng = stream(1, Stream::Policy, 0);
        let mut actor = Actor::new(3, 4, 1, 0.7, &mut rng);
        let phi = [1.0, 0.3, -0.5];
        actor.set_probs(&phi);
        assert!((actor.probs[1] - 0.7).abs() < 0.02, "{:?}", actor.probs);
        actor.counts = vec![2, 0, 1, 3];
        actor.accumulate(&phi, 1.0);
        // Against a numerical derivative of sum_a counts_a ln pi_a.
        let log_likelihood = |a: &Actor| {
            let mut a = a.clone();
            a.set_probs(&phi);
            a.counts
                .iter()
                .zip(&a.probs)
                .map(|(&c, p)| f64::from(c) * p.ln())
                .sum::<f64>()
        };
        for k in 0..actor.w.len() {
            let (mut up, mut down) = (actor.clone(), actor.clone());
            up.w[k] += 1e-6;
            down.w[k] -= 1e-6;
            let numeric = (log_likelihood(&up) - log_likelihood(&down)) / 2e-6;
            assert!((numeric - actor.grad[k]).abs() < 1e-5, "weight {k}");
        }
        // Draws follow the probabilities' running sum.
        let p = actor.probs.clone();
        assert_eq!(actor.draw(0.0), 0);
        assert_eq!(actor.draw(p[0] + 1e-9), 1);
        assert_eq!(actor.draw(1.0 - 1e-12), 3);
    }

    #[test]
    fn the_critic_learns_the_discounted_value_of_a_steady_state() {
        // Two nodes alike (no imbalance), each interval one migration costing 1: u = -1
        // forever, so V = -1 / (1 - gamma) = -2.
        let mut rng = stream(2, Stream::Policy, 0);
        let mut l = Learner::new(
            2,
            LearnParams {
                cost: 1.0,
                ..params()
            },
            &mut rng,
        );
        let x = [1.0, 1.0];
        for _ in 0..3000 {
            l.agents[0].migrate.counts[1] = 1;
            l.agents[0].migrate.counts[0] = 0;
            l.heartbeat(&x);
        }
        for i in 0..2 {
            assert!((l.value(i, &x) + 2.0).abs() < 0.05, "{}", l.value(i, &x));
        }
        assert_eq!(l.updates, 2999);
    }

    #[test]
    fn consensus_averages_the_critics_and_leaves_the_actors() {
        let mut rng = stream(3, Stream::Policy, 0);
        let mut l = Learner::new(
            3,
            LearnParams {
                consensus: 2,
                ..params()
            },
            &mut rng,
        );
        let before: Vec<Vec<f64>> = l.agents.iter().map(|a| a.migrate.w.clone()).collect();
        let mean: Vec<f64> = (0..l.agents[0].theta.len())
            .map(|k| l.agents.iter().map(|a| a.theta[k]).sum::<f64>() / 3.0)
            .collect();
        l.consensus();
        for (a, w) in l.agents.iter().zip(&before) {
            for (t, m) in a.theta.iter().zip(&mean) {
                assert!((t - m).abs() < 1e-15);
            }
            assert_eq!(&a.migrate.w, w);
        }
        // Every second update runs it: the critics stay equal as they see the same data.
        for i in 0..4 {
            l.heartbeat(&[i as f64, 0.0, 1.0]);
        }
        assert_eq!(l.updates, 3);
        assert_eq!(l.agents[0].theta, l.agents[2].theta);
    }

    #[test]
    fn adamw_steps_up_the_gradient_by_about_the_learning_rate() {
        let mut a = AdamW::new(2);
        let mut p = [1.0, -1.0];
        a.step(&mut p, &[0.5, -3.0], 0.1, 0.0);
        assert!(
            (p[0] - 1.1).abs() < 1e-6 && (p[1] + 1.1).abs() < 1e-6,
            "{p:?}"
        );
        // Decoupled weight decay shrinks a parameter with no gradient.
        let mut a = AdamW::new(1);
        let mut p = [2.0];
        a.step(&mut p, &[0.0], 0.1, 0.5);
        assert!((p[0] - 1.9).abs() < 1e-9, "{p:?}");
    }
}
