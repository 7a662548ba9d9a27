//! The Tofino programs' ingress as typed data: the declarations (externs, registers, register
//! actions, actions, tables with their stage, keys, entries and defaults) and the apply tree.
//! [`super::emit`] builds one [`Control`] a role from the model's facts and the plan, prints it
//! at the edge ([`Control::print`]) and hands the same value to the checker ([`super::check`]),
//! which walks it instead of reading the printed text back.
//!
//! The statements inside an action or a register action, and an `if`'s condition, are P4 source
//! ([`Code`]): the checker reads their effects (fields read and written, register actions
//! executed, comparisons) from their tokens.

use std::fmt::Write as _;

/// P4 source of statements, one a line and indented by four spaces a nesting level; or, for a
/// condition, one expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Code(pub String);

impl Code {
    /// `text` without its blank first and last lines and its lines' common indentation, so that
    /// a body can be written indented where it is built.
    pub fn new(text: &str) -> Code {
        Code(dedent(text))
    }
}

/// `text` without leading and trailing blank lines and the indentation all its lines share.
pub fn dedent(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    let (Some(first), Some(last)) = (first, last) else {
        return String::new();
    };
    let lines = &lines[first..=last];
    let common = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| l.get(common..).unwrap_or("").trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A table's match kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match {
    Exact,
    Ternary,
    Range,
}

impl Match {
    pub fn name(self) -> &'static str {
        match self {
            Match::Exact => "exact",
            Match::Ternary => "ternary",
            Match::Range => "range",
        }
    }
}

/// A table key: a field (or a slice of one) and how it matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    pub field: String,
    pub kind: Match,
}

/// An action with its arguments, as a table's default or an entry's action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub action: String,
    pub args: Vec<String>,
}

impl Call {
    /// `action(args)`: the arguments split at top-level commas.
    pub fn parse(call: &str) -> Call {
        let (name, rest) = call.split_once('(').unwrap_or((call, ")"));
        let inner = rest.trim_end().trim_end_matches(')');
        Call {
            action: name.trim().to_string(),
            args: inner
                .split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(str::to_string)
                .collect(),
        }
    }

    fn print(&self, bare: bool) -> String {
        if bare && self.args.is_empty() {
            self.action.clone()
        } else {
            format!("{}({})", self.action, self.args.join(", "))
        }
    }
}

/// Where bf-p4c is told to place a table, beside the plan's stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pin {
    /// Left to the compiler.
    Free,
    /// `@stage(N)`, which bf-p4c obeys (the plan's stage: the checker holds it to that).
    Stage(u8),
    /// `@placement_priority(-1)`: placed after every other table.
    Last,
}

/// A table's default action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Default {
    pub call: Call,
    /// `const default_action`: the control plane cannot change it.
    pub constant: bool,
}

/// A match-action table at its stage in the plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub name: String,
    /// The plan's stage (`@horus_stage`).
    pub stage: u8,
    pub pin: Pin,
    pub keys: Vec<Key>,
    pub actions: Vec<String>,
    /// Constant entries, in priority order: the key values (one a key, `_` for any) and the call.
    pub entries: Vec<(Vec<String>, Call)>,
    pub default: Option<Default>,
    /// Its size: a number, or a constant of the program.
    pub size: String,
}

impl Table {
    /// The size as a number, where it is one.
    pub fn size_number(&self) -> Option<u64> {
        let s = self.size.as_str();
        s.strip_prefix("0x")
            .map_or_else(|| s.parse().ok(), |h| u64::from_str_radix(h, 16).ok())
    }
}

/// A register: `Register<cell, index>(size[, init]) name`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Register {
    pub name: String,
    pub cell: String,
    pub index: String,
    pub size: String,
    pub init: Option<String>,
}

/// The name of a register action's value in its body (`void apply(inout T v, ...)`).
pub const VALUE: &str = "v";

/// A register action on `register`, returning `out` (in `rv`, unless `returns` is false).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterAction {
    pub name: String,
    pub register: String,
    pub out: String,
    pub returns: bool,
    pub body: Code,
}

/// An action: its parameters (`type name`) and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    pub name: String,
    pub params: Vec<String>,
    pub body: Code,
}

/// An extern instance other than a register: a counter, the random unit, a hash unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extern {
    /// `Counter`, `Random` or `Hash`.
    pub kind: String,
    /// Its type arguments, `<...>` without the brackets.
    pub types: String,
    /// Its constructor's arguments.
    pub args: String,
    pub name: String,
}

/// A declaration of the control, in program order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decl {
    /// A comment's text (without `/*` and `*/`, its lines joined by newlines).
    Comment(String),
    Blank,
    Extern(Extern),
    Register(Register),
    RegisterAction(RegisterAction),
    Action(Action),
    Table(Table),
}

/// A statement of the apply block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    Apply(String),
    If {
        cond: Code,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
    },
    Comment(String),
}

/// The ingress control: its name, declarations and apply block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Control {
    pub name: String,
    pub decls: Vec<Decl>,
    pub apply: Vec<Stmt>,
}

/// The TNA ingress control's parameters.
const INGRESS_PARAMS: &str = "(inout headers_t hdr, inout horus_md_t md,
        in ingress_intrinsic_metadata_t ig_intr_md,
        in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
        inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
        inout ingress_intrinsic_metadata_for_tm_t ig_tm_md)";

impl Control {
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables().find(|t| t.name == name)
    }

    pub fn table_mut(&mut self, name: &str) -> Option<&mut Table> {
        self.decls.iter_mut().find_map(|d| match d {
            Decl::Table(t) if t.name == name => Some(t),
            _ => None,
        })
    }

    pub fn tables(&self) -> impl Iterator<Item = &Table> {
        self.decls.iter().filter_map(|d| match d {
            Decl::Table(t) => Some(t),
            _ => None,
        })
    }

    pub fn register(&self, name: &str) -> Option<&Register> {
        self.decls.iter().find_map(|d| match d {
            Decl::Register(r) if r.name == name => Some(r),
            _ => None,
        })
    }

    /// The control as P4_16 source.
    pub fn print(&self) -> String {
        let mut s = format!("control {}{INGRESS_PARAMS} {{\n\n", self.name);
        for d in &self.decls {
            print_decl(&mut s, self, d);
        }
        s += "    apply {\n";
        print_block(&mut s, &self.apply, 2);
        s += "    }\n}\n";
        s
    }
}

/// `text`'s lines, each indented by `n` spaces (an empty line stays empty).
fn indented(text: &str, n: usize) -> String {
    text.lines()
        .map(|l| {
            if l.is_empty() {
                "\n".to_string()
            } else {
                format!("{:n$}{l}\n", "")
            }
        })
        .collect()
}

/// A block comment at indentation `n`: `/* first`, ` * next`, ` */` closing the last line.
fn comment(text: &str, n: usize) -> String {
    let mut s = String::new();
    for (i, l) in text.lines().enumerate() {
        let lead = if i == 0 { "/*" } else { " *" };
        let sep = if l.is_empty() { "" } else { " " };
        let _ = writeln!(s, "{:n$}{lead}{sep}{l}", "");
    }
    s.pop();
    s + " */\n"
}

fn print_decl(s: &mut String, c: &Control, d: &Decl) {
    match d {
        Decl::Comment(text) => *s += &comment(text, 4),
        Decl::Blank => *s += "\n",
        Decl::Extern(e) => {
            let _ = writeln!(s, "    {}<{}>({}) {};", e.kind, e.types, e.args, e.name);
        }
        Decl::Register(r) => {
            let init = r.init.as_ref().map_or(String::new(), |i| format!(", {i}"));
            let _ = writeln!(
                s,
                "    Register<{}, {}>({}{init}) {};",
                r.cell, r.index, r.size, r.name
            );
        }
        Decl::RegisterAction(ra) => {
            let (cell, index) = c
                .register(&ra.register)
                .map_or(("?", "?"), |r| (r.cell.as_str(), r.index.as_str()));
            let rv = if ra.returns {
                format!(", out {} rv", ra.out)
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "    RegisterAction<{cell}, {index}, {}>({}) {} = {{\n        void apply(inout {cell} {VALUE}{rv}) {{",
                ra.out, ra.register, ra.name
            );
            *s += &indented(&ra.body.0, 12);
            *s += "        }\n    };\n";
        }
        Decl::Action(a) => {
            // The parameters on lines of at most 100 columns, continued at 12.
            let mut lines = vec![format!("    action {}(", a.name)];
            for (i, p) in a.params.iter().enumerate() {
                let piece = if i + 1 < a.params.len() {
                    format!("{p},")
                } else {
                    format!("{p}) {{")
                };
                let last = lines.last_mut().expect("a first line");
                if last.ends_with('(') {
                    last.push_str(&piece);
                } else if last.len() + 1 + piece.len() <= 100 {
                    last.push(' ');
                    last.push_str(&piece);
                } else {
                    lines.push(format!("            {piece}"));
                }
            }
            if a.params.is_empty() {
                lines[0].push_str(") {");
            }
            for l in lines {
                let _ = writeln!(s, "{l}");
            }
            *s += &indented(&a.body.0, 8);
            *s += "    }\n";
        }
        Decl::Table(t) => print_table(s, t),
    }
}

fn print_table(s: &mut String, t: &Table) {
    let pin = match t.pin {
        Pin::Free => String::new(),
        Pin::Stage(s) => format!(" @stage({s})"),
        Pin::Last => " @placement_priority(-1)".to_string(),
    };
    let _ = writeln!(s, "    @horus_stage({}){pin} table {} {{", t.stage, t.name);
    if !t.keys.is_empty() {
        *s += "        key = {\n";
        for k in &t.keys {
            let _ = writeln!(s, "            {}: {};", k.field, k.kind.name());
        }
        *s += "        }\n";
    }
    let _ = writeln!(s, "        actions = {{ {}; }}", t.actions.join("; "));
    if !t.entries.is_empty() {
        *s += "        const entries = {\n";
        for (values, call) in &t.entries {
            let key = if values.len() == 1 {
                values[0].clone()
            } else {
                format!("({})", values.join(", "))
            };
            let _ = writeln!(s, "            {key} : {};", call.print(false));
        }
        *s += "        }\n";
    }
    if let Some(d) = &t.default {
        let _ = writeln!(
            s,
            "        {}default_action = {};",
            if d.constant { "const " } else { "" },
            d.call.print(true)
        );
    }
    let _ = writeln!(s, "        size = {};", t.size);
    *s += "    }\n";
}

fn print_block(s: &mut String, stmts: &[Stmt], depth: usize) {
    let pad = 4 * depth;
    for st in stmts {
        match st {
            Stmt::Apply(t) => {
                let _ = writeln!(s, "{:pad$}{t}.apply();", "");
            }
            Stmt::Comment(text) => *s += &comment(text, pad),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let _ = writeln!(s, "{:pad$}if ({}) {{", "", cond.0);
                print_block(s, then, depth + 1);
                let mut rest = otherwise;
                loop {
                    match rest.as_slice() {
                        [] => break,
                        [
                            Stmt::If {
                                cond,
                                then,
                                otherwise,
                            },
                        ] => {
                            let _ = writeln!(s, "{:pad$}}} else if ({}) {{", "", cond.0);
                            print_block(s, then, depth + 1);
                            rest = otherwise;
                        }
                        more => {
                            let _ = writeln!(s, "{:pad$}}} else {{", "");
                            print_block(s, more, depth + 1);
                            break;
                        }
                    }
                }
                let _ = writeln!(s, "{:pad$}}}", "");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Builders
// ---------------------------------------------------------------------------------------------

/// A table applied: `name.apply()`.
pub fn apply(name: &str) -> Stmt {
    Stmt::Apply(name.to_string())
}

/// `if (cond) { then } else { otherwise }`.
pub fn when(cond: &str, then: Vec<Stmt>, otherwise: Vec<Stmt>) -> Stmt {
    Stmt::If {
        cond: Code::new(cond),
        then,
        otherwise,
    }
}

/// Tables applied one after another.
pub fn applies(names: &[&str]) -> Vec<Stmt> {
    names.iter().map(|n| apply(n)).collect()
}

/// A comment (its text dedented: [`dedent`]).
pub fn note(text: &str) -> Decl {
    Decl::Comment(dedent(text))
}

pub fn register(name: &str, cell: &str, index: &str, size: &str) -> Register {
    Register {
        name: name.into(),
        cell: cell.into(),
        index: index.into(),
        size: size.into(),
        init: None,
    }
}

pub fn register_decl(name: &str, cell: &str, index: &str, size: &str) -> Decl {
    Decl::Register(register(name, cell, index, size))
}

/// A register action that returns `out` in `rv`.
pub fn register_action(name: &str, register: &str, out: &str, body: &str) -> RegisterAction {
    RegisterAction {
        name: name.into(),
        register: register.into(),
        out: out.into(),
        returns: true,
        body: Code::new(body),
    }
}

/// [`register_action`] as a declaration.
pub fn ra(name: &str, register: &str, out: &str, body: &str) -> Decl {
    Decl::RegisterAction(register_action(name, register, out, body))
}

/// An action with `params` (`type name`, comma-separated; empty for none).
pub fn action(name: &str, params: &str, body: &str) -> Decl {
    Decl::Action(Action {
        name: name.into(),
        params: split_params(params),
        body: Code::new(body),
    })
}

/// Parameters split at the commas outside angle brackets.
fn split_params(params: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in params.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(params[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = params[start..].trim();
    if !last.is_empty() {
        out.push(last.to_string());
    }
    out
}

pub fn extern_(kind: &str, types: &str, args: &str, name: &str) -> Decl {
    Decl::Extern(Extern {
        kind: kind.into(),
        types: types.into(),
        args: args.into(),
        name: name.into(),
    })
}

/// Keys from `field: kind` strings.
pub fn keys(keys: &[&str]) -> Vec<Key> {
    keys.iter()
        .map(|k| {
            let (field, kind) = k.rsplit_once(':').expect("a key is `field: kind`");
            let kind = match kind.trim() {
                "exact" => Match::Exact,
                "ternary" => Match::Ternary,
                "range" => Match::Range,
                other => panic!("unknown match kind {other}"),
            };
            Key {
                field: field.trim().to_string(),
                kind,
            }
        })
        .collect()
}

/// Entries from `values : action(args)` strings (`values` one value or a parenthesised tuple).
pub fn entries(entries: &[&str]) -> Vec<(Vec<String>, Call)> {
    entries
        .iter()
        .map(|e| {
            let (values, call) = e.rsplit_once(" : ").expect("an entry is `values : call`");
            let values = values.trim();
            let values = values
                .strip_prefix('(')
                .and_then(|v| v.strip_suffix(')'))
                .map_or_else(
                    || vec![values.to_string()],
                    |v| v.split(',').map(|x| x.trim().to_string()).collect(),
                );
            (values, Call::parse(call.trim()))
        })
        .collect()
}
