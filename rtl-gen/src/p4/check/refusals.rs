//! What Intel's compiler (bf-p4c) refused in these programs, as rules the structural checker
//! applies without it: the [`Refusal`]s of [`super::Report::refusals`].

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;

use super::{Tok, closing, field, is, parse_num, word};

/// A construct bf-p4c refuses for Tofino 1, found by the structural checker.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Refusal {
    /// The rule (one of [`REFUSAL_RULES`]).
    pub rule: &'static str,
    /// Where: the register action, action or list.
    pub at: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.rule, self.at)
    }
}

/// A register action with more comparisons than a stateful ALU's two comparison units
/// (bf-p4c: "needs N comparisons but the device only has 2 comparison units").
pub const SALU_COMPARISONS: &str = "salu-comparisons";
/// A slice of the register value in a register action's condition (bf-p4c: "slice of register
/// value in condition is not supported").
pub const SALU_SLICE: &str = "salu-slice-in-condition";
/// A conditional value (`c ? a : b`) in an action whose condition reads a field (bf-p4c:
/// "Conditions in an action must be simple comparisons of an action data parameter").
pub const ACTION_CONDITION: &str = "action-condition-on-field";
/// A non-zero constant in a mirror, resubmit or digest field list (bf-p4c: "Non-zero constant
/// value ... in digest field list is not supported on tofino").
pub const LIST_CONSTANT: &str = "constant-in-field-list";

/// A table applied in several places whose successors differ between them (bf-p4c: "table ...
/// is applied in multiple places, and the next-table information cannot correctly propagate
/// through this multiple application"): a Tofino 1 table has one next table.
pub const NEXT_TABLE: &str = "next-table-differs";
/// Register actions of one register that return different constants (bf-p4c: "cannot output
/// constant from Register ... because the predicate is output in another control flow").
pub const SALU_CONSTANTS: &str = "salu-different-constants";

/// An action assignment with two additions or subtractions (`x = a + b + 1`): a Tofino action
/// does one operation a field per stage (bf-p4c: "action spanning multiple stages ... We
/// currently support only single stage actions").
pub const ACTION_OPERATIONS: &str = "action-two-operations";

/// A register whose register actions read more fields than a stateful ALU's two PHV inputs
/// (bf-p4c: "Register ... requires more than 2 PHV inputs"): the inputs are the register's,
/// shared by all of its actions.
pub const SALU_PHV_INPUTS: &str = "salu-phv-inputs";
/// The PHV inputs of a Tofino 1 stateful ALU.
pub const SALU_PHV_INPUT_LIMIT: usize = 2;
/// A register action comparing two words of its register (`v.hi == v.lo`) (bfas, the
/// assembler: "Can't have more than one memory operand to an SALU compare").
pub const SALU_TWO_WORDS: &str = "salu-two-words-compared";

/// A register action's addition or subtraction of two fields (`v.lo = md.a |-| md.b`): a
/// stateful ALU operates on a register word or a constant and one field (bfas, the assembler:
/// "Can't reference phv in first operand of add instruction").
pub const SALU_TWO_FIELDS: &str = "salu-two-fields-operated";

/// A range-match table whose TCAM, as bf-p4c reserves it, is deeper than a stage's TCAM column:
/// bf-p4c spreads it over stages the plan does not have (the leaf's range tables of 4,096
/// entries took stages 1 to 4). It reserves, for a quarter of the entries, `2 n - 1` lines a
/// range over `n` nibbles (at most 8), one line for the others, 512 lines a block
/// (`mau/resource_estimate.cpp`, `RangeEntries`), and a table's blocks stack in a column of 12
/// (`find_ternary_stretch`).
pub const RANGE_TABLE_OVER_A_STAGE: &str = "range-table-over-a-stage";
/// The TCAM blocks of a column of a Tofino 1 stage.
pub const TCAM_COLUMN_BLOCKS: u64 = 12;

/// The rules of [`Refusal`].
pub const REFUSAL_RULES: [&str; 11] = [
    SALU_COMPARISONS,
    SALU_SLICE,
    ACTION_CONDITION,
    LIST_CONSTANT,
    NEXT_TABLE,
    SALU_CONSTANTS,
    ACTION_OPERATIONS,
    SALU_PHV_INPUTS,
    SALU_TWO_WORDS,
    SALU_TWO_FIELDS,
    RANGE_TABLE_OVER_A_STAGE,
];

/// The TCAM blocks bf-p4c reserves for a table of `entries` with range keys of `bits` each
/// (one TCAM wide; see [`RANGE_TABLE_OVER_A_STAGE`]).
pub fn range_table_blocks(entries: u64, bits: &[u64]) -> u64 {
    let lines_a_range = bits
        .iter()
        .map(|b| (2 * b.div_ceil(4)).saturating_sub(1).min(8))
        .max()
        .unwrap_or(1);
    let ranges = entries * 25 / 100;
    (ranges * lines_a_range + (entries - ranges)).div_ceil(512)
}

/// The range tables of `c` deeper than a stage's TCAM column; the widths of their keys from
/// the metadata (`md.X`) of `common`.
pub(super) fn range_tables_over_a_stage(c: &super::Control, common: &[Tok]) -> Vec<Refusal> {
    let width = |field: &str| -> u64 {
        let name = field.strip_prefix("md.").unwrap_or(field);
        common
            .windows(5)
            .find_map(|w| match w {
                [
                    Tok::Word(b),
                    Tok::Punct("<"),
                    Tok::Num(n),
                    Tok::Punct(">"),
                    Tok::Word(f),
                ] if b == "bit" && f == name => parse_num(n),
                _ => None,
            })
            .unwrap_or(32)
    };
    c.tables
        .iter()
        .filter(|(_, t)| !t.range_keys.is_empty())
        .filter_map(|(name, t)| {
            let bits: Vec<u64> = t.range_keys.iter().map(|f| width(f)).collect();
            let blocks = range_table_blocks(t.size?, &bits);
            (blocks > TCAM_COLUMN_BLOCKS).then(|| Refusal {
                rule: RANGE_TABLE_OVER_A_STAGE,
                at: format!(
                    "{name} ({} entries, {blocks} TCAM blocks)",
                    t.size.unwrap_or(0)
                ),
            })
        })
        .collect()
}

/// Whether an action's statements hold an assignment with more than one addition or subtraction
/// (`|+|` and `|-|` included) on its right side.
pub(super) fn two_operations(body: &[Tok]) -> bool {
    body.split(|t| is(Some(t), ";")).any(|stmt| {
        let Some(eq) = stmt.iter().position(|t| is(Some(t), "=")) else {
            return false;
        };
        stmt[eq + 1..]
            .iter()
            .filter(|t| matches!(t, Tok::Punct("+" | "-" | "|+|" | "|-|")))
            .count()
            > 1
    })
}

/// The tables of `stmts` applied in several places whose successors differ, each with its
/// successors at every place (the first tables that can follow it; `<end>` for none).
pub(super) fn next_table_conflicts(stmts: &[super::Stmt]) -> Vec<(String, Vec<BTreeSet<String>>)> {
    let mut sites: BTreeMap<String, Vec<BTreeSet<String>>> = BTreeMap::new();
    let end = BTreeSet::from(["<end>".to_string()]);
    successors(stmts, &end, &mut sites);
    sites
        .into_iter()
        .filter(|(_, s)| s.len() > 1 && s.iter().any(|n| n != &s[0]))
        .collect()
}

/// The first tables of `stmts` followed by `after`; records each application's successors.
fn successors(
    stmts: &[super::Stmt],
    after: &BTreeSet<String>,
    sites: &mut BTreeMap<String, Vec<BTreeSet<String>>>,
) -> BTreeSet<String> {
    let mut next = after.clone();
    for s in stmts.iter().rev() {
        next = match s {
            super::Stmt::Apply(t) => {
                sites.entry(t.clone()).or_default().push(next);
                BTreeSet::from([t.clone()])
            }
            super::Stmt::If(_, then, otherwise) => {
                let mut first = successors(then, &next, sites);
                first.extend(successors(otherwise, &next, sites));
                first
            }
        };
    }
    next
}

/// The non-zero constants a register action's body returns (`rv = N;`).
pub(super) fn output_constants(body: &[Tok]) -> BTreeSet<u64> {
    body.windows(4)
        .filter_map(|w| match w {
            [Tok::Word(v), Tok::Punct("="), Tok::Num(n), Tok::Punct(";")] if v == "rv" => {
                parse_num(n).filter(|&n| n != 0)
            }
            _ => None,
        })
        .collect()
}

/// The conditions of a register action's `if`s, each as its tokens between the parentheses.
fn conditions(body: &[Tok]) -> Result<Vec<&[Tok]>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < body.len() {
        if word(body.get(i)) == Some("if") && is(body.get(i + 1), "(") {
            let end = closing(body, i + 1)?;
            out.push(&body[i + 2..end - 1]);
            i = end;
        } else {
            i += 1;
        }
    }
    Ok(out)
}

/// Whether token `t` is the register value `v` or one of its words (`v.lo`, `v.hi`).
fn is_value(t: &Tok, v: &str) -> bool {
    matches!(t, Tok::Word(x) if x == v || x.strip_prefix(v).is_some_and(|r| r.starts_with('.')))
}

/// Whether a register action's body slices its register value (`v`, `v.lo`, `v.hi`) inside the
/// condition of an `if`.
pub(super) fn slice_in_condition(body: &[Tok]) -> Result<bool> {
    let v = super::ir::VALUE;
    Ok(conditions(body)?.iter().any(|cond| {
        cond.windows(2)
            .any(|w| is_value(&w[0], v) && is(Some(&w[1]), "["))
    }))
}

/// Whether one comparison of a register action's conditions (the conditions split at `&&` and
/// `||`) reads the register value twice (`v.hi == v.lo`): a stateful ALU compares one memory
/// word with PHV or constants.
pub(super) fn two_words_compared(body: &[Tok]) -> Result<bool> {
    let v = super::ir::VALUE;
    Ok(conditions(body)?.iter().any(|cond| {
        cond.split(|t| matches!(t, Tok::Punct("&&" | "||")))
            .any(|cmp| cmp.iter().filter(|t| is_value(t, v)).count() > 1)
    }))
}

/// Whether a register action's body assigns a sum or difference of two fields, without its
/// register value (`v.lo = md.avg + md.x`; `v = v + md.x` is a stateful ALU's operation).
pub(super) fn two_fields_operated(body: &[Tok]) -> bool {
    let v = super::ir::VALUE;
    body.split(|t| is(Some(t), ";")).any(|stmt| {
        let Some(eq) = stmt.iter().position(|t| is(Some(t), "=")) else {
            return false;
        };
        let rhs = &stmt[eq + 1..];
        let fields: BTreeSet<&str> = rhs
            .iter()
            .filter_map(|t| match t {
                Tok::Word(w) if field(w).is_some() => Some(w.as_str()),
                _ => None,
            })
            .collect();
        fields.len() > 1
            && !rhs.iter().any(|t| is_value(t, v))
            && rhs
                .iter()
                .any(|t| matches!(t, Tok::Punct("+" | "-" | "|+|" | "|-|")))
    })
}

/// Whether an action's statements choose a value by a condition that reads a field
/// (`x = (md.f == 0 ? a : b)`): the condition of each `?` runs back to its unmatched `(` (or the
/// statement's `=`).
pub(super) fn condition_on_field(body: &[Tok]) -> bool {
    body.iter().enumerate().any(|(q, t)| {
        if !is(Some(t), "?") {
            return false;
        }
        let mut depth = 0;
        let mut k = q;
        while k > 0 {
            k -= 1;
            match &body[k] {
                Tok::Punct(")") | Tok::Punct("]") => depth += 1,
                Tok::Punct("(") if depth == 0 => break,
                Tok::Punct("(") | Tok::Punct("[") => depth -= 1,
                Tok::Punct("=") | Tok::Punct(";") | Tok::Punct("?") | Tok::Punct(":")
                    if depth == 0 =>
                {
                    break;
                }
                _ => {}
            }
        }
        body[k + 1..q]
            .iter()
            .any(|t| matches!(t, Tok::Word(w) if field(w).is_some()))
    })
}

/// The non-zero constants in the field lists of mirror, resubmit and digest calls
/// (`mirror.emit<h>(session, {a, B, 0})`): a field or a zero is fine.
pub(super) fn list_constants(toks: &[Tok]) -> Result<Vec<Refusal>> {
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let Tok::Word(w) = t else { continue };
        if !(w.ends_with(".emit") || w.ends_with(".pack")) {
            continue;
        }
        let Some(open) = (i + 1..toks.len().min(i + 8)).find(|&k| is(toks.get(k), "(")) else {
            continue;
        };
        let end = closing(toks, open)?;
        let Some(lb) = (open..end).find(|&k| is(toks.get(k), "{")) else {
            continue;
        };
        let rb = closing(toks, lb)?;
        for item in toks[lb + 1..rb - 1].split(|t| is(Some(t), ",")) {
            let constant = match item {
                [Tok::Num(n)] => parse_num(n) != Some(0),
                [Tok::Word(x)] => field(x).is_none(),
                _ => false,
            };
            if constant {
                let text: Vec<String> = item
                    .iter()
                    .map(|t| match t {
                        Tok::Word(x) | Tok::Num(x) => x.clone(),
                        Tok::Str(x) => format!("{x:?}"),
                        Tok::Punct(p) => p.to_string(),
                    })
                    .collect();
                out.push(Refusal {
                    rule: LIST_CONSTANT,
                    at: format!("{w} list holds {}", text.join("")),
                });
            }
        }
    }
    Ok(out)
}
