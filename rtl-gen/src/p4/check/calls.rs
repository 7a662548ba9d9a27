//! Calls of actions: each passes as many arguments as the action has parameters.

use std::collections::BTreeMap;

use anyhow::Result;

use super::{Tok, closing, is, word};

/// Every call of an action (a default action, a constant entry) passes as many arguments as
/// the action has parameters (bf-p4c's front end: "Too many arguments for action").
pub(super) fn action_arity(toks: &[Tok], errors: &mut Vec<String>) -> Result<()> {
    let count = |list: &[Tok]| {
        if list.is_empty() {
            0
        } else {
            let mut depth = 0i32;
            1 + list
                .iter()
                .filter(|t| match t {
                    Tok::Punct("(" | "<" | "[" | "{") => {
                        depth += 1;
                        false
                    }
                    Tok::Punct(")" | ">" | "]" | "}") => {
                        depth -= 1;
                        false
                    }
                    Tok::Punct(",") => depth == 0,
                    _ => false,
                })
                .count()
        }
    };
    let mut params = BTreeMap::new();
    for i in 0..toks.len().saturating_sub(2) {
        if word(toks.get(i)) == Some("action") && is(toks.get(i + 2), "(") {
            let end = closing(toks, i + 2)?;
            let name = word(toks.get(i + 1)).unwrap_or_default().to_string();
            params.insert(name, count(&toks[i + 3..end - 1]));
        }
    }
    for i in 1..toks.len().saturating_sub(1) {
        let Some(name) = word(toks.get(i)) else {
            continue;
        };
        let (Some(&want), true) = (params.get(name), is(toks.get(i + 1), "(")) else {
            continue;
        };
        if word(toks.get(i - 1)) == Some("action") {
            continue;
        }
        let end = closing(toks, i + 1)?;
        let got = count(&toks[i + 2..end - 1]);
        if got != want {
            errors.push(format!(
                "action {name} is called with {got} argument(s); it has {want} parameter(s)"
            ));
        }
    }
    Ok(())
}
