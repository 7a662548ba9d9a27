//! Calls of actions: each passes as many arguments as the action has parameters.

use std::collections::BTreeMap;

use super::ir;

/// Every call of an action (a table's default action, a constant entry) passes as many
/// arguments as the action has parameters (bf-p4c's front end: "Too many arguments for
/// action").
pub(super) fn action_arity(c: &ir::Control, errors: &mut Vec<String>) {
    let params: BTreeMap<&str, usize> = c
        .decls
        .iter()
        .filter_map(|d| match d {
            ir::Decl::Action(a) => Some((a.name.as_str(), a.params.len())),
            _ => None,
        })
        .collect();
    for t in c.tables() {
        let calls = t
            .entries
            .iter()
            .map(|(_, call)| call)
            .chain(t.default.iter().map(|d| &d.call));
        for call in calls {
            let Some(&want) = params.get(call.action.as_str()) else {
                continue;
            };
            let got = call.args.len();
            if got != want {
                errors.push(format!(
                    "action {} is called with {got} argument(s); it has {want} parameter(s)",
                    call.action
                ));
            }
        }
    }
}
