//! A parser for the subset of Python literals that the public Horus simulator writes into its
//! dataset logs: dicts, lists, tuples, integers, floats, quoted strings, `True`, `False`, `None`.
//!
//! Errors carry the byte offset and what was expected, because a dataset line is one huge line and
//! "invalid syntax" alone would leave the reader searching megabytes by hand.

use thiserror::Error;

#[derive(Clone, Debug, PartialEq)]
pub enum PyValue {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    None,
    List(Vec<PyValue>),
    Dict(Vec<(PyValue, PyValue)>),
}

#[derive(Debug, Error, PartialEq)]
#[error("python literal, byte {offset}: {message}")]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

impl PyValue {
    /// The value under string key `key` of a dict.
    pub fn get(&self, key: &str) -> Option<&PyValue> {
        match self {
            PyValue::Dict(items) => items
                .iter()
                .find(|(k, _)| matches!(k, PyValue::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            PyValue::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[PyValue]> {
        match self {
            PyValue::List(items) => Some(items),
            _ => None,
        }
    }
}

/// Parses one literal; trailing text other than whitespace is an error.
pub fn parse(text: &str) -> Result<PyValue, ParseError> {
    let mut p = Parser {
        s: text.as_bytes(),
        pos: 0,
    };
    let v = p.value()?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(p.error("unexpected text after the literal"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> ParseError {
        ParseError {
            offset: self.pos,
            message: message.to_string(),
        }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.s.get(self.pos).copied()
    }

    fn value(&mut self) -> Result<PyValue, ParseError> {
        match self.peek() {
            None => Err(self.error("expected a value, found the end of the text")),
            Some(b'{') => self.dict(),
            Some(b'[') => self.sequence(b']').map(PyValue::List),
            Some(b'(') => self.sequence(b')').map(PyValue::List),
            Some(b'\'' | b'"') => self.string().map(PyValue::Str),
            Some(c) if c == b'-' || c == b'+' || c.is_ascii_digit() => self.number(),
            Some(c) if c.is_ascii_alphabetic() => self.word(),
            Some(c) => Err(self.error(&format!("unexpected character {:?}", c as char))),
        }
    }

    /// Items up to `close`, comma separated, a trailing comma allowed as in Python.
    fn items<T>(
        &mut self,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Result<T, ParseError>,
    ) -> Result<Vec<T>, ParseError> {
        self.pos += 1; // the opening bracket, checked by the caller
        let mut out = Vec::new();
        loop {
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok(out);
            }
            out.push(item(self)?);
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == close => {}
                _ => return Err(self.error(&format!("expected ',' or '{}'", close as char))),
            }
        }
    }

    fn sequence(&mut self, close: u8) -> Result<Vec<PyValue>, ParseError> {
        self.items(close, Self::value)
    }

    fn dict(&mut self) -> Result<PyValue, ParseError> {
        let items = self.items(b'}', |p| {
            let key = p.value()?;
            if p.peek() != Some(b':') {
                return Err(p.error("expected ':' after a dict key"));
            }
            p.pos += 1;
            Ok((key, p.value()?))
        })?;
        Ok(PyValue::Dict(items))
    }

    fn string(&mut self) -> Result<String, ParseError> {
        let quote = self.s[self.pos];
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        while let Some(&c) = self.s.get(self.pos) {
            self.pos += 1;
            match c {
                _ if c == quote => {
                    return String::from_utf8(out).map_err(|_| ParseError {
                        offset: start,
                        message: "string is not UTF-8".into(),
                    });
                }
                b'\\' => {
                    let esc = *self
                        .s
                        .get(self.pos)
                        .ok_or_else(|| self.error("unterminated escape"))?;
                    self.pos += 1;
                    out.push(match esc {
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'0' => 0,
                        other => other, // \\ \' \" and anything else kept literally
                    });
                }
                _ => out.push(c),
            }
        }
        Err(ParseError {
            offset: start,
            message: "unterminated string".into(),
        })
    }

    fn number(&mut self) -> Result<PyValue, ParseError> {
        let start = self.pos;
        self.pos += 1;
        while let Some(&c) = self.s.get(self.pos) {
            if c.is_ascii_digit()
                || matches!(c, b'.' | b'e' | b'E' | b'_')
                || (matches!(c, b'+' | b'-') && matches!(self.s[self.pos - 1], b'e' | b'E'))
            {
                self.pos += 1;
            } else {
                break;
            }
        }
        let text: String = std::str::from_utf8(&self.s[start..self.pos])
            .expect("ASCII")
            .chars()
            .filter(|&c| c != '_')
            .collect();
        let bad = |what: &str| ParseError {
            offset: start,
            message: format!("{what} {text:?}"),
        };
        if text.contains(['.', 'e', 'E']) {
            text.parse()
                .map(PyValue::Float)
                .map_err(|_| bad("invalid float"))
        } else {
            text.parse()
                .map(PyValue::Int)
                .map_err(|_| bad("invalid or out-of-range integer"))
        }
    }

    fn word(&mut self) -> Result<PyValue, ParseError> {
        let start = self.pos;
        while self
            .s
            .get(self.pos)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            self.pos += 1;
        }
        match &self.s[start..self.pos] {
            b"True" => Ok(PyValue::Bool(true)),
            b"False" => Ok(PyValue::Bool(false)),
            b"None" => Ok(PyValue::None),
            w => Err(ParseError {
                offset: start,
                message: format!("unknown name {:?}", String::from_utf8_lossy(w)),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_dicts_lists_and_scalars() {
        let v = parse("{'a': [1, -2, 3.5], \"b\": {'c': 'x\\'y'}, 'd': (True, None,), 'e': []}")
            .unwrap();
        assert_eq!(
            v.get("a"),
            Some(&PyValue::List(vec![
                PyValue::Int(1),
                PyValue::Int(-2),
                PyValue::Float(3.5)
            ]))
        );
        assert_eq!(
            v.get("b").and_then(|b| b.get("c")),
            Some(&PyValue::Str("x'y".into()))
        );
        assert_eq!(
            v.get("d"),
            Some(&PyValue::List(vec![PyValue::Bool(true), PyValue::None]))
        );
        assert_eq!(
            v.get("e").and_then(PyValue::as_list).map(<[_]>::len),
            Some(0)
        );
    }

    #[test]
    fn reports_the_offset_of_a_missing_comma() {
        let err = parse("[1, 2 3]").unwrap_err();
        assert_eq!(err.offset, 6);
        assert!(err.message.contains("expected ','"), "{err}");
    }

    #[test]
    fn rejects_unterminated_strings_and_trailing_text() {
        assert_eq!(
            parse("{'abc: 1}").unwrap_err().message,
            "unterminated string"
        );
        assert!(
            parse("{} x")
                .unwrap_err()
                .message
                .contains("after the literal")
        );
        assert!(parse("").unwrap_err().message.contains("end of the text"));
        assert!(
            parse("[nope]")
                .unwrap_err()
                .message
                .contains("unknown name")
        );
    }

    #[test]
    fn rejects_integers_that_overflow() {
        assert!(
            parse("99999999999999999999")
                .unwrap_err()
                .message
                .contains("out-of-range")
        );
    }
}
