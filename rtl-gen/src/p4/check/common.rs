//! The checks of the common file (the Horus header's layout and the constants against the
//! model's) and of the programs' classification of a frame.

use super::*;

/// The common file's header layout and constants against the model's.
pub(super) fn check_common(common: &str, errors: &mut Vec<String>) -> Result<()> {
    let toks = tokenize(common)?;
    // The Horus header.
    let mut fields = Vec::new();
    if let Some(i) = toks
        .windows(2)
        .position(|w| word(Some(&w[0])) == Some("header") && word(Some(&w[1])) == Some("horus_h"))
    {
        let end = closing(&toks, i + 2)?;
        for f in toks[i + 3..end - 1].split(|t| is(Some(t), ";")) {
            if let [
                Tok::Word(b),
                Tok::Punct("<"),
                Tok::Num(w),
                Tok::Punct(">"),
                Tok::Word(n),
            ] = f
            {
                if b == "bit" {
                    fields.push((n.clone(), w.parse::<usize>()?));
                }
            }
        }
    }
    let want: Vec<(String, usize)> = emit::horus_fields()
        .into_iter()
        .map(|(n, w)| (n.to_string(), w))
        .collect();
    if fields != want {
        errors.push(format!(
            "header horus_h is {fields:?}; the wire format is {want:?}"
        ));
    }
    let bits: usize = fields.iter().map(|(_, w)| w).sum();
    if bits != 8 * wire::HEADER_LEN {
        errors.push(format!(
            "header horus_h has {bits} bits; the wire header has {}",
            8 * wire::HEADER_LEN
        ));
    }
    // Constants.
    let mut consts = BTreeMap::new();
    for w in toks.windows(7) {
        if let [
            Tok::Word(k),
            Tok::Word(_),
            Tok::Punct("<"),
            Tok::Num(_),
            Tok::Punct(">"),
            Tok::Word(n),
            Tok::Punct("="),
        ] = &w[..7]
        {
            if k == "const" {
                consts.insert(n.clone(), ());
            }
        }
    }
    let value = |name: &str| -> Option<u64> {
        let i = toks.iter().position(|t| word(Some(t)) == Some(name))?;
        match toks.get(i + 2) {
            Some(Tok::Num(v)) => parse_num(v),
            _ => None,
        }
    };
    let mut expect = |name: String, v: u64| {
        if value(&name) != Some(v) {
            errors.push(format!(
                "constant {name} is {:?}; the model says {v}",
                value(&name)
            ));
        }
    };
    for t in PacketType::ALL {
        expect(emit::pkt_const(t), u64::from(t.code()));
    }
    for (i, r) in DropReason::ALL.iter().enumerate() {
        expect(emit::drop_const(*r), i as u64);
    }
    expect("HORUS_UDP_PORT".into(), u64::from(wire::HORUS_UDP_PORT));
    expect("ETHERTYPE_IPV4".into(), u64::from(wire::ETHERTYPE_IPV4));
    expect("IP_PROTOCOL_UDP".into(), u64::from(wire::IP_PROTOCOL_UDP));
    expect("HORUS_HEADER_LEN".into(), wire::HEADER_LEN as u64);
    // The bridge header is as long as the mirror sessions' truncation assumes.
    let bridge: u64 = header_bits(&toks, "bridge_h")?;
    if bridge != 8 * emit::BRIDGE_LEN as u64 {
        errors.push(format!(
            "header bridge_h has {bridge} bits; BRIDGE_LEN says {} bytes",
            emit::BRIDGE_LEN
        ));
    }
    // The resubmit header is exactly Tofino 1's 64 bits (0: there is none).
    let resub = header_bits(&toks, "resub_h")?;
    if resub != 64 {
        errors.push(format!(
            "header resub_h has {resub} bits; Tofino 1 resubmits 64"
        ));
    }
    Ok(())
}

/// The width in bits of header `name` (0 if there is none).
fn header_bits(toks: &[Tok], name: &str) -> Result<u64> {
    let Some(i) = toks
        .windows(2)
        .position(|w| word(Some(&w[0])) == Some("header") && word(Some(&w[1])) == Some(name))
    else {
        return Ok(0);
    };
    let end = closing(toks, i + 2)?;
    Ok(toks[i + 3..end - 1]
        .windows(4)
        .filter_map(|w| match w {
            [Tok::Word(b), Tok::Punct("<"), Tok::Num(n), Tok::Punct(">")] if b == "bit" => {
                parse_num(n)
            }
            _ => None,
        })
        .sum())
}

/// The `classify` table's entries against [`emit::classify`] for every type, flag and pass.
pub(super) fn check_classify(role: Role, program: &ir::Control, errors: &mut Vec<String>) {
    let mut found = BTreeMap::new();
    let entries = program
        .table("classify")
        .map_or(&[][..], |t| &t.entries[..]);
    for (values, call) in entries {
        // (TYPE, more, resubmitted) : set_kind(KIND, REASON)
        if let ([pkt, more, resub], [kind, reason]) = (&values[..], &call.args[..]) {
            found.insert(
                (pkt.clone(), more == "1", resub == "1"),
                (kind.clone(), reason.clone()),
            );
        }
    }
    for t in PacketType::ALL {
        for more in [false, true] {
            for resub in [false, true] {
                let want = emit::classify(role, t, more, resub).map(|(k, r)| {
                    (
                        emit::kind_const(k).to_string(),
                        r.map_or_else(|| "DROP_NONE".to_string(), emit::drop_const),
                    )
                });
                let got = found.remove(&(emit::pkt_const(t), more, resub));
                if got != want {
                    errors.push(format!(
                        "classify entry for {} (flag {more}, resubmitted {resub}) is {got:?}; the model says {want:?}",
                        t.name()
                    ));
                }
            }
        }
    }
    for k in found.keys() {
        errors.push(format!("classify has an entry for an unknown packet {k:?}"));
    }
}
