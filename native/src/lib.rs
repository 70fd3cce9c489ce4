//! The generic hot part of the traces fold (otel_agent/fold/traces.py), in Rust: ExportTraceServiceRequest
//! bytes → the Arrow buffers of the span, event and link columns, the attributes as the same JSON text the
//! Python fold writes (keys sorted, orjson's number and string forms, OTLP-JSON wrappers for bytes and
//! non-finite doubles).
//!
//! It answers only for requests it is sure it folds exactly as the Python path does, and returns `None` for
//! anything else — a wire form it does not take (unknown fields inside values, groups, a message field given
//! twice, a malformed varint), a span the Python fold would reject or refuse (ids of the wrong length,
//! all-zero ids, timestamps past 2^63, invalid UTF-8, values nested deeper than MAX_DEPTH), a panic — so that
//! the Python fold, run next, gives its own answer and its own error. Resource and scope values, the promoted
//! record columns, lineage keys and retrieval documents stay in Python (otel_agent/fold/native.py), which gets
//! the raw resource and scope bytes and the attribute JSON of the few spans that need them.

use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};

use base64::Engine;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

/// Levels of arrays and key-value lists a value may nest (otel_agent/fold/anyvalue.py MAX_DEPTH).
const MAX_DEPTH: u32 = 24;
const TIMESTAMP_LIMIT: u64 = 1 << 63;
const RUN_ID_KEY: &[u8] = b"otel_agent.run.id";
const RECORD_KIND_KEY: &[u8] = b"otel_agent.record.kind";
const SPAN_KINDS: [&str; 6] = ["UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER"];
const STATUS_CODES: [&str; 3] = ["UNSET", "OK", "ERROR"];

/// `None` everywhere below means: not this path, let the Python fold answer.
type R<T> = Option<T>;

// ---------------------------------------------------------------------------------------------- wire reading

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

enum Field<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    fn done(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// A varint of at most 10 bytes whose value fits 64 bits (anything else: not ours).
    fn varint(&mut self) -> R<u64> {
        let mut result: u64 = 0;
        for i in 0..10 {
            let b = *self.buf.get(self.pos)?;
            self.pos += 1;
            if i == 9 && b > 1 {
                return None;
            }
            result |= u64::from(b & 0x7F) << (7 * i);
            if b < 0x80 {
                return Some(result);
            }
        }
        None
    }

    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }

    /// The next field: (number, value). Groups (wire types 3, 4) and field number 0 are not ours.
    fn field(&mut self) -> R<(u32, Field<'a>)> {
        let key = self.varint()?;
        let number = key >> 3;
        if number == 0 || number > (1 << 29) - 1 {
            return None;
        }
        let value = match key & 7 {
            0 => Field::Varint(self.varint()?),
            1 => Field::Fixed64(u64::from_le_bytes(self.take(8)?.try_into().ok()?)),
            2 => {
                let n = usize::try_from(self.varint()?).ok()?;
                Field::Bytes(self.take(n)?)
            }
            5 => Field::Fixed32(u32::from_le_bytes(self.take(4)?.try_into().ok()?)),
            _ => return None,
        };
        Some((number as u32, value))
    }
}

fn utf8(b: &[u8]) -> R<&str> {
    std::str::from_utf8(b).ok()
}

// ---------------------------------------------------------------------------------------------- JSON text

/// A JSON string as orjson writes it: `"` `\` and control characters escaped (short forms for \b \t \n \f \r,
/// `\u00xx` otherwise), everything else as it is.
fn json_str(out: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let mut start = 0;
    for (i, &b) in s.iter().enumerate() {
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x09 => b"\\t",
            0x0A => b"\\n",
            0x0C => b"\\f",
            0x0D => b"\\r",
            0x00..=0x1F => b"",
            _ => continue,
        };
        out.extend_from_slice(&s[start..i]);
        if short.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 15) as usize]);
        } else {
            out.extend_from_slice(short);
        }
        start = i + 1;
    }
    out.extend_from_slice(&s[start..]);
    out.push(b'"');
}

/// A finite double as orjson writes it: the shortest digits that read back the same; plain decimal notation
/// for decimal exponents -5..16 (with `.0` when integral), otherwise `d[.ddd]e±x`.
fn json_f64(out: &mut Vec<u8>, d: f64) {
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(d).as_bytes();
    let (negative, text) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        _ => (false, text),
    };
    // ryu's text → digits (no leading/trailing zeros) and the decimal exponent of the first digit
    let (mantissa, exp_part) = match text.iter().position(|&c| c == b'e' || c == b'E') {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let mut exp10: i64 = exp_part.map(|e| std::str::from_utf8(e).unwrap().parse::<i64>().unwrap()).unwrap_or(0);
    let dot = mantissa.iter().position(|&c| c == b'.').unwrap_or(mantissa.len());
    let mut digits: Vec<u8> = mantissa.iter().copied().filter(|&c| c != b'.').collect();
    // value = 0.digits × 10^(dot + exp10); first digit's exponent = dot + exp10 - 1 - leading zeros
    let lead = digits.iter().take_while(|&&c| c == b'0').count();
    if negative {
        out.push(b'-');
    }
    if lead == digits.len() {
        out.extend_from_slice(b"0.0");
        return;
    }
    exp10 += dot as i64 - 1 - lead as i64;
    digits.drain(..lead);
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    let n = digits.len() as i64;
    if (-5..16).contains(&exp10) {
        if exp10 < 0 {
            out.extend_from_slice(b"0.");
            out.extend(std::iter::repeat(b'0').take((-exp10 - 1) as usize));
            out.extend_from_slice(&digits);
        } else if n > exp10 + 1 {
            let int_len = (exp10 + 1) as usize;
            out.extend_from_slice(&digits[..int_len]);
            out.push(b'.');
            out.extend_from_slice(&digits[int_len..]);
        } else {
            out.extend_from_slice(&digits);
            out.extend(std::iter::repeat(b'0').take((exp10 + 1 - n) as usize));
            out.extend_from_slice(b".0");
        }
    } else {
        out.push(digits[0]);
        if n > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        if exp10 >= 0 {
            out.push(b'+');
        }
        out.extend_from_slice(exp10.to_string().as_bytes());
    }
}

fn json_double(out: &mut Vec<u8>, d: f64) {
    if d.is_finite() {
        json_f64(out, d);
    } else if d.is_nan() {
        out.extend_from_slice(br#"{"doubleValue":"NaN"}"#);
    } else if d > 0.0 {
        out.extend_from_slice(br#"{"doubleValue":"Infinity"}"#);
    } else {
        out.extend_from_slice(br#"{"doubleValue":"-Infinity"}"#);
    }
}

/// Every key seen in a request's span, event and link attributes (nested key-value lists too): the Python side
/// checks them against the redaction rules and folds the request itself if any would be dropped or hashed.
type Keys<'a> = HashSet<&'a [u8]>;

/// What a top-level value was, for `as_text` of the promoted run id.
enum Shape<'a> {
    Null,
    Str(&'a [u8]),
    Other,
}

/// One serialized AnyValue → its JSON text (anyvalue.plain), appended to `out`.
fn any_value<'a>(raw: &'a [u8], depth: u32, out: &mut Vec<u8>, keys: &mut Keys<'a>) -> R<Shape<'a>> {
    let mut r = Reader::new(raw);
    if r.done() {
        out.extend_from_slice(b"null");
        return Some(Shape::Null);
    }
    let (number, value) = r.field()?;
    if !r.done() {
        return None; // more than one field: protobuf's last-one-wins / merge rules, left to upb
    }
    match (number, value) {
        (1, Field::Bytes(s)) => {
            utf8(s)?;
            json_str(out, s);
            return Some(Shape::Str(s));
        }
        (2, Field::Varint(v)) => out.extend_from_slice(if v != 0 { b"true" } else { b"false" }),
        (3, Field::Varint(v)) => out.extend_from_slice((v as i64).to_string().as_bytes()),
        (4, Field::Fixed64(v)) => json_double(out, f64::from_bits(v)),
        (5, Field::Bytes(array)) => {
            if depth == 0 {
                return None;
            }
            out.push(b'[');
            let mut a = Reader::new(array);
            let mut first = true;
            while !a.done() {
                match a.field()? {
                    (1, Field::Bytes(item)) => {
                        if !first {
                            out.push(b',');
                        }
                        first = false;
                        any_value(item, depth - 1, out, keys)?;
                    }
                    _ => return None,
                }
            }
            out.push(b']');
        }
        (6, Field::Bytes(list)) => {
            if depth == 0 {
                return None;
            }
            key_value_list(list, depth - 1, out, keys)?;
        }
        (7, Field::Bytes(b)) => {
            out.extend_from_slice(br#"{"bytesValue":""#);
            let mut text = String::new();
            base64::engine::general_purpose::STANDARD.encode_string(b, &mut text);
            out.extend_from_slice(text.as_bytes());
            out.extend_from_slice(br#""}"#);
        }
        _ => return None, // string_value_strindex, unknown fields, wrong wire types
    }
    Some(Shape::Other)
}

/// A KeyValueList → a JSON object, keys sorted, the last of equal keys kept, wrapped as `{"kvlistValue": …}`
/// when its one key is one of the OTLP-JSON wrappers'.
fn key_value_list<'a>(list: &'a [u8], depth: u32, out: &mut Vec<u8>, keys: &mut Keys<'a>) -> R<()> {
    let mut entries: Vec<(&'a [u8], Vec<u8>)> = Vec::new();
    let mut r = Reader::new(list);
    while !r.done() {
        let kv = match r.field()? {
            (1, Field::Bytes(kv)) => kv,
            _ => return None,
        };
        let (mut key, mut value): (&[u8], Option<&[u8]>) = (b"", None);
        let mut k = Reader::new(kv);
        while !k.done() {
            match k.field()? {
                (1, Field::Bytes(s)) => key = s,
                (2, Field::Bytes(v)) if value.is_none() => value = Some(v),
                _ => return None,
            }
        }
        utf8(key)?;
        keys.insert(key);
        let mut text = Vec::new();
        any_value(value.unwrap_or(b""), depth, &mut text, keys)?;
        entries.push((key, text));
    }
    let entries = sorted_last(entries);
    let wrap = entries.len() == 1
        && matches!(entries[0].0, b"bytesValue" | b"doubleValue" | b"kvlistValue");
    if wrap {
        out.extend_from_slice(br#"{"kvlistValue":"#);
    }
    object(out, entries.iter().map(|(k, v)| (*k, v.as_slice())));
    if wrap {
        out.push(b'}');
    }
    Some(())
}

/// Entries sorted by key (bytewise: orjson's order for UTF-8 keys), keeping the last of equal keys.
fn sorted_last<K: Ord + Copy, V>(mut entries: Vec<(K, V)>) -> Vec<(K, V)> {
    entries.sort_by(|a, b| a.0.cmp(&b.0)); // stable: equal keys stay in wire order
    let mut kept: Vec<(K, V)> = Vec::with_capacity(entries.len());
    for e in entries {
        if kept.last().is_some_and(|last| last.0 == e.0) {
            kept.pop();
        }
        kept.push(e);
    }
    kept
}

fn object<'b>(out: &mut Vec<u8>, entries: impl Iterator<Item = (&'b [u8], &'b [u8])>) {
    out.push(b'{');
    let mut first = true;
    for (k, v) in entries {
        if !first {
            out.push(b',');
        }
        first = false;
        json_str(out, k);
        out.push(b':');
        out.extend_from_slice(v);
    }
    out.push(b'}');
}

/// What the fold needs of one attribute map besides its JSON text.
#[derive(Default)]
struct MapInfo {
    /// `as_text(attributes.get(RUN_ID_KEY))`: None, or (is a string, bytes of the string or JSON text)
    run_id: Option<Vec<u8>>,
    has_record_kind: bool,
}

/// A span/event/link attribute map (repeated KeyValue as map entries: the last of equal keys wins, as the
/// shadow types' map does) → its JSON text appended to `out`.
fn attribute_map<'a>(entries: &[&'a [u8]], out: &mut Vec<u8>, keys: &mut Keys<'a>) -> R<MapInfo> {
    let mut info = MapInfo::default();
    if entries.is_empty() {
        out.extend_from_slice(b"{}");
        return Some(info);
    }
    let mut pairs: Vec<(&'a [u8], &'a [u8])> = Vec::with_capacity(entries.len());
    for entry in entries {
        let (mut key, mut value): (&[u8], &[u8]) = (b"", b"");
        let mut r = Reader::new(entry);
        while !r.done() {
            match r.field()? {
                (1, Field::Bytes(s)) => key = s,
                (2, Field::Bytes(v)) => value = v, // a map entry's bytes value: the last one wins
                _ => return None,
            }
        }
        utf8(key)?;
        pairs.push((key, value));
    }
    let pairs = sorted_last(pairs);
    out.push(b'{');
    for (i, (key, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        keys.insert(key);
        json_str(out, key);
        out.push(b':');
        let start = out.len();
        let shape = any_value(value, MAX_DEPTH, out, keys)?;
        if *key == RUN_ID_KEY {
            info.run_id = match shape {
                Shape::Null => None,
                Shape::Str(s) => Some(s.to_vec()),
                Shape::Other => Some(out[start..].to_vec()),
            };
        } else if *key == RECORD_KIND_KEY {
            info.has_record_kind = true;
        }
    }
    out.push(b'}');
    Some(info)
}

// ---------------------------------------------------------------------------------------------- columns

struct Bitmap {
    bits: Vec<u8>,
    len: usize,
    nulls: usize,
}

impl Bitmap {
    fn new() -> Self {
        Bitmap { bits: Vec::new(), len: 0, nulls: 0 }
    }
    fn push(&mut self, valid: bool) {
        if self.len % 8 == 0 {
            self.bits.push(0);
        }
        if valid {
            *self.bits.last_mut().unwrap() |= 1 << (self.len % 8);
        } else {
            self.nulls += 1;
        }
        self.len += 1;
    }
}

struct StrCol {
    offsets: Vec<i32>,
    data: Vec<u8>,
    valid: Bitmap,
}

impl StrCol {
    fn new() -> Self {
        StrCol { offsets: vec![0], data: Vec::new(), valid: Bitmap::new() }
    }
    fn end(&mut self) -> R<()> {
        self.offsets.push(i32::try_from(self.data.len()).ok()?);
        Some(())
    }
    fn push(&mut self, s: &[u8]) -> R<()> {
        self.data.extend_from_slice(s);
        self.valid.push(true);
        self.end()
    }
    fn push_null(&mut self) -> R<()> {
        self.valid.push(false);
        self.end()
    }
    fn push_hex(&mut self, s: &[u8]) -> R<()> {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for &b in s {
            self.data.push(HEX[(b >> 4) as usize]);
            self.data.push(HEX[(b & 15) as usize]);
        }
        self.valid.push(true);
        self.end()
    }
    /// Start a value written straight into `data` (then `end_value`).
    fn end_value(&mut self) -> R<()> {
        self.valid.push(true);
        self.end()
    }
    fn to_py(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let validity: Py<PyAny> = if self.valid.nulls > 0 {
            PyBytes::new(py, &self.valid.bits).into_any().unbind()
        } else {
            py.None()
        };
        let offsets: Vec<u8> = self.offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
        let t = (
            self.valid.len,
            self.valid.nulls,
            validity,
            PyBytes::new(py, &offsets),
            PyBytes::new(py, &self.data),
        );
        Ok(t.into_pyobject(py)?.into_any().unbind())
    }
}

fn fixed_to_py<T: Copy>(py: Python<'_>, values: &[T], to_le: impl Fn(T) -> Vec<u8>) -> Py<PyAny> {
    let bytes: Vec<u8> = values.iter().flat_map(|&v| to_le(v)).collect();
    PyBytes::new(py, &bytes).into_any().unbind()
}

// ---------------------------------------------------------------------------------------------- the fold

#[derive(Default)]
struct Span<'a> {
    trace_id: &'a [u8],
    span_id: &'a [u8],
    trace_state: &'a [u8],
    parent_span_id: &'a [u8],
    flags: u32,
    name: &'a [u8],
    kind: u64,
    start: u64,
    end: u64,
    attributes: Vec<&'a [u8]>,
    dropped_attributes: u64,
    events: Vec<&'a [u8]>,
    dropped_events: u64,
    links: Vec<&'a [u8]>,
    dropped_links: u64,
    status: Option<&'a [u8]>,
}

fn parse_span(raw: &[u8]) -> R<Span<'_>> {
    let mut s = Span::default();
    let mut r = Reader::new(raw);
    while !r.done() {
        match r.field()? {
            (1, Field::Bytes(b)) => s.trace_id = b,
            (2, Field::Bytes(b)) => s.span_id = b,
            (3, Field::Bytes(b)) => s.trace_state = utf8(b)?.as_bytes(),
            (4, Field::Bytes(b)) => s.parent_span_id = b,
            (5, Field::Bytes(b)) => s.name = utf8(b)?.as_bytes(),
            (6, Field::Varint(v)) => s.kind = v,
            (7, Field::Fixed64(v)) => s.start = v,
            (8, Field::Fixed64(v)) => s.end = v,
            (9, Field::Bytes(b)) => s.attributes.push(b),
            (10, Field::Varint(v)) => s.dropped_attributes = v,
            (11, Field::Bytes(b)) => s.events.push(b),
            (12, Field::Varint(v)) => s.dropped_events = v,
            (13, Field::Bytes(b)) => s.links.push(b),
            (14, Field::Varint(v)) => s.dropped_links = v,
            (15, Field::Bytes(b)) if s.status.is_none() => s.status = Some(b),
            (16, Field::Fixed32(v)) => s.flags = v,
            (n, _) if n <= 16 => return None, // a known field with another wire type, or status twice
            _ => {}                           // unknown fields are skipped, as upb does
        }
    }
    Some(s)
}

/// An enum value as upb keeps it (int32, open enum) → its name, or its number as text.
fn enum_name(v: u64, names: &[&str]) -> String {
    let n = v as u32 as i32;
    if n >= 0 && (n as usize) < names.len() {
        names[n as usize].to_string()
    } else {
        n.to_string()
    }
}

struct Event<'a> {
    time: u64,
    name: &'a [u8],
    attributes: Vec<&'a [u8]>,
    dropped: u64,
}

fn parse_event(raw: &[u8]) -> R<Event<'_>> {
    let mut e = Event { time: 0, name: b"", attributes: Vec::new(), dropped: 0 };
    let mut r = Reader::new(raw);
    while !r.done() {
        match r.field()? {
            (1, Field::Fixed64(v)) => e.time = v,
            (2, Field::Bytes(b)) => e.name = utf8(b)?.as_bytes(),
            (3, Field::Bytes(b)) => e.attributes.push(b),
            (4, Field::Varint(v)) => e.dropped = v,
            (n, _) if n <= 4 => return None,
            _ => {}
        }
    }
    Some(e)
}

struct Link<'a> {
    trace_id: &'a [u8],
    span_id: &'a [u8],
    trace_state: &'a [u8],
    attributes: Vec<&'a [u8]>,
    dropped: u64,
    flags: u32,
}

fn parse_link(raw: &[u8]) -> R<Link<'_>> {
    let mut l = Link { trace_id: b"", span_id: b"", trace_state: b"", attributes: Vec::new(), dropped: 0, flags: 0 };
    let mut r = Reader::new(raw);
    while !r.done() {
        match r.field()? {
            (1, Field::Bytes(b)) => l.trace_id = b,
            (2, Field::Bytes(b)) => l.span_id = b,
            (3, Field::Bytes(b)) => l.trace_state = utf8(b)?.as_bytes(),
            (4, Field::Bytes(b)) => l.attributes.push(b),
            (5, Field::Varint(v)) => l.dropped = v,
            (6, Field::Fixed32(v)) => l.flags = v,
            (n, _) if n <= 6 => return None,
            _ => {}
        }
    }
    Some(l)
}

fn parse_status(raw: Option<&[u8]>) -> R<(&[u8], u64)> {
    let (mut message, mut code): (&[u8], u64) = (b"", 0);
    if let Some(raw) = raw {
        let mut r = Reader::new(raw);
        while !r.done() {
            match r.field()? {
                (2, Field::Bytes(b)) => message = utf8(b)?.as_bytes(),
                (3, Field::Varint(v)) => code = v,
                (n, _) if n <= 3 => return None,
                _ => {}
            }
        }
    }
    Some((message, code))
}

struct Out<'a> {
    keys: Keys<'a>,
    // spans
    s_tid: StrCol,
    s_sid: StrCol,
    s_pid: StrCol,
    s_ts: StrCol,
    s_flags: Vec<u32>,
    s_name: StrCol,
    s_kind: StrCol,
    s_start: Vec<i64>,
    s_end: Vec<i64>,
    s_dur: Vec<i64>,
    s_sc: StrCol,
    s_sm: StrCol,
    s_attr: StrCol,
    s_da: Vec<u32>,
    s_de: Vec<u32>,
    s_dl: Vec<u32>,
    s_run: StrCol,
    // events
    e_tid: StrCol,
    e_sid: StrCol,
    e_index: Vec<u32>,
    e_time: Vec<i64>,
    e_name: StrCol,
    e_attr: StrCol,
    e_da: Vec<u32>,
    // links
    l_tid: StrCol,
    l_sid: StrCol,
    l_index: Vec<u32>,
    l_ltid: StrCol,
    l_lsid: StrCol,
    l_ts: StrCol,
    l_flags: Vec<u32>,
    l_attr: StrCol,
    l_da: Vec<u32>,
}

impl<'a> Out<'a> {
    fn new() -> Self {
        Out {
            keys: HashSet::new(),
            s_tid: StrCol::new(),
            s_sid: StrCol::new(),
            s_pid: StrCol::new(),
            s_ts: StrCol::new(),
            s_flags: Vec::new(),
            s_name: StrCol::new(),
            s_kind: StrCol::new(),
            s_start: Vec::new(),
            s_end: Vec::new(),
            s_dur: Vec::new(),
            s_sc: StrCol::new(),
            s_sm: StrCol::new(),
            s_attr: StrCol::new(),
            s_da: Vec::new(),
            s_de: Vec::new(),
            s_dl: Vec::new(),
            s_run: StrCol::new(),
            e_tid: StrCol::new(),
            e_sid: StrCol::new(),
            e_index: Vec::new(),
            e_time: Vec::new(),
            e_name: StrCol::new(),
            e_attr: StrCol::new(),
            e_da: Vec::new(),
            l_tid: StrCol::new(),
            l_sid: StrCol::new(),
            l_index: Vec::new(),
            l_ltid: StrCol::new(),
            l_lsid: StrCol::new(),
            l_ts: StrCol::new(),
            l_flags: Vec::new(),
            l_attr: StrCol::new(),
            l_da: Vec::new(),
        }
    }
}

/// A span that the Python side finishes: (row, resource index, attribute JSON, trace id, span id, end time).
struct Special {
    row: usize,
    resource: usize,
    attributes: (usize, usize),
}

/// One scope group: (resource index, raw scope or None, scope schema url, first row, rows, retrieval scope).
struct Group<'a> {
    resource: usize,
    scope: Option<&'a [u8]>,
    schema_url: &'a [u8],
    rows: usize,
    retrieval: bool,
}

struct Resource<'a> {
    raw: Option<&'a [u8]>,
    schema_url: &'a [u8],
}

/// `"openinference" in scope_name.lower()` (fold/lineage.is_retrieval_span_scope); the Python side checks
/// the same rule on each group and folds the request itself if the two ever disagree.
fn is_retrieval_scope(scope: Option<&[u8]>) -> R<bool> {
    let mut name: &[u8] = b"";
    if let Some(raw) = scope {
        let mut r = Reader::new(raw);
        while !r.done() {
            if let (1, f) = r.field()? {
                match f {
                    Field::Bytes(b) => name = b,
                    _ => return None,
                }
            }
        }
    }
    let name = utf8(name)?;
    Some(name.to_lowercase().contains("openinference"))
}

struct Folded<'a> {
    out: Out<'a>,
    items: usize,
    resources: Vec<Resource<'a>>,
    groups: Vec<Group<'a>>,
    specials: Vec<Special>,
}

fn fold(payload: &[u8]) -> R<Folded<'_>> {
    let mut out = Out::new();
    let mut resources = Vec::new();
    let mut groups = Vec::new();
    let mut specials = Vec::new();
    let mut items = 0usize;
    let mut req = Reader::new(payload);
    while !req.done() {
        let rs_raw = match req.field()? {
            (1, Field::Bytes(b)) => b,
            (1, _) => return None,
            _ => continue,
        };
        let mut resource = Resource { raw: None, schema_url: b"" };
        let mut scopes: Vec<&[u8]> = Vec::new();
        let mut r = Reader::new(rs_raw);
        while !r.done() {
            match r.field()? {
                (1, Field::Bytes(b)) if resource.raw.is_none() => resource.raw = Some(b),
                (2, Field::Bytes(b)) => scopes.push(b),
                (3, Field::Bytes(b)) => resource.schema_url = utf8(b)?.as_bytes(),
                (n, _) if n <= 3 => return None,
                _ => {}
            }
        }
        let resource_index = resources.len();
        resources.push(resource);
        for ss_raw in scopes {
            let mut group = Group { resource: resource_index, scope: None, schema_url: b"", rows: 0, retrieval: false };
            let mut spans: Vec<&[u8]> = Vec::new();
            let mut r = Reader::new(ss_raw);
            while !r.done() {
                match r.field()? {
                    (1, Field::Bytes(b)) if group.scope.is_none() => group.scope = Some(b),
                    (2, Field::Bytes(b)) => spans.push(b),
                    (3, Field::Bytes(b)) => group.schema_url = utf8(b)?.as_bytes(),
                    (n, _) if n <= 3 => return None,
                    _ => {}
                }
            }
            group.retrieval = is_retrieval_scope(group.scope)?;
            for span_raw in spans {
                items += 1;
                let span = parse_span(span_raw)?;
                fold_span(&span, &mut out, group.retrieval, resource_index, &mut specials)?;
                group.rows += 1;
            }
            groups.push(group);
        }
    }
    Some(Folded { out, items, resources, groups, specials })
}

fn fold_span<'a>(
    span: &Span<'a>,
    out: &mut Out<'a>,
    retrieval_scope: bool,
    resource: usize,
    specials: &mut Vec<Special>,
) -> R<()> {
    let (tid, sid, pid) = (span.trace_id, span.span_id, span.parent_span_id);
    if tid.len() != 16 || sid.len() != 8 || (!pid.is_empty() && pid.len() != 8) {
        return None;
    }
    if tid.iter().all(|&b| b == 0) || sid.iter().all(|&b| b == 0) {
        return None;
    }
    let (st, et) = (span.start, span.end);
    if (st | et) >= TIMESTAMP_LIMIT {
        return None;
    }
    for (i, raw) in span.events.iter().enumerate() {
        let e = parse_event(raw)?;
        if e.time >= TIMESTAMP_LIMIT {
            return None;
        }
        out.e_tid.push_hex(tid)?;
        out.e_sid.push_hex(sid)?;
        out.e_index.push(u32::try_from(i).ok()?);
        out.e_time.push(e.time as i64);
        out.e_name.push(e.name)?;
        attribute_map(&e.attributes, &mut out.e_attr.data, &mut out.keys)?;
        out.e_attr.end_value()?;
        out.e_da.push(e.dropped as u32);
    }
    for (i, raw) in span.links.iter().enumerate() {
        let l = parse_link(raw)?;
        if l.trace_id.len() != 16 || l.span_id.len() != 8 {
            return None;
        }
        out.l_tid.push_hex(tid)?;
        out.l_sid.push_hex(sid)?;
        out.l_index.push(u32::try_from(i).ok()?);
        out.l_ltid.push_hex(l.trace_id)?;
        out.l_lsid.push_hex(l.span_id)?;
        out.l_ts.push(l.trace_state)?;
        out.l_flags.push(l.flags);
        attribute_map(&l.attributes, &mut out.l_attr.data, &mut out.keys)?;
        out.l_attr.end_value()?;
        out.l_da.push(l.dropped as u32);
    }
    let row = out.s_tid.valid.len;
    out.s_tid.push_hex(tid)?;
    out.s_sid.push_hex(sid)?;
    if !pid.is_empty() && pid.iter().any(|&b| b != 0) {
        out.s_pid.push_hex(pid)?;
    } else {
        out.s_pid.push_null()?;
    }
    out.s_ts.push(span.trace_state)?;
    out.s_flags.push(span.flags);
    out.s_name.push(span.name)?;
    out.s_kind.push(enum_name(span.kind, &SPAN_KINDS).as_bytes())?;
    out.s_start.push(st as i64);
    out.s_end.push(et as i64);
    out.s_dur.push(et as i64 - st as i64);
    let (message, code) = parse_status(span.status)?;
    out.s_sc.push(enum_name(code, &STATUS_CODES).as_bytes())?;
    out.s_sm.push(message)?;
    let start = out.s_attr.data.len();
    let info = attribute_map(&span.attributes, &mut out.s_attr.data, &mut out.keys)?;
    let end = out.s_attr.data.len();
    out.s_attr.end_value()?;
    match &info.run_id {
        Some(text) => out.s_run.push(text)?,
        None => out.s_run.push_null()?,
    }
    let name = span.name;
    if info.has_record_kind || retrieval_scope || name == b"retrieval" || name.starts_with(b"retrieval ") {
        specials.push(Special { row, resource, attributes: (start, end) });
    }
    out.s_da.push(span.dropped_attributes as u32);
    out.s_de.push(span.dropped_events as u32);
    out.s_dl.push(span.dropped_links as u32);
    Some(())
}

// ---------------------------------------------------------------------------------------------- Python

fn u32s(py: Python<'_>, v: &[u32]) -> Py<PyAny> {
    fixed_to_py(py, v, |x| x.to_le_bytes().to_vec())
}

fn i64s(py: Python<'_>, v: &[i64]) -> Py<PyAny> {
    fixed_to_py(py, v, |x| x.to_le_bytes().to_vec())
}

fn to_python<'py>(py: Python<'py>, f: &Folded<'_>) -> PyResult<Bound<'py, PyTuple>> {
    let o = &f.out;
    let s = |c: &StrCol| c.to_py(py);
    let spans = PyList::new(
        py,
        [
            ("trace_id", s(&o.s_tid)?),
            ("span_id", s(&o.s_sid)?),
            ("parent_span_id", s(&o.s_pid)?),
            ("trace_state", s(&o.s_ts)?),
            ("flags", u32s(py, &o.s_flags)),
            ("name", s(&o.s_name)?),
            ("kind", s(&o.s_kind)?),
            ("start_time", i64s(py, &o.s_start)),
            ("end_time", i64s(py, &o.s_end)),
            ("duration_ns", i64s(py, &o.s_dur)),
            ("status_code", s(&o.s_sc)?),
            ("status_message", s(&o.s_sm)?),
            ("attributes", s(&o.s_attr)?),
            ("dropped_attributes_count", u32s(py, &o.s_da)),
            ("dropped_events_count", u32s(py, &o.s_de)),
            ("dropped_links_count", u32s(py, &o.s_dl)),
            ("run_id", s(&o.s_run)?),
        ],
    )?;
    let events = PyList::new(
        py,
        [
            ("trace_id", s(&o.e_tid)?),
            ("span_id", s(&o.e_sid)?),
            ("event_index", u32s(py, &o.e_index)),
            ("time", i64s(py, &o.e_time)),
            ("name", s(&o.e_name)?),
            ("attributes", s(&o.e_attr)?),
            ("dropped_attributes_count", u32s(py, &o.e_da)),
        ],
    )?;
    let links = PyList::new(
        py,
        [
            ("trace_id", s(&o.l_tid)?),
            ("span_id", s(&o.l_sid)?),
            ("link_index", u32s(py, &o.l_index)),
            ("linked_trace_id", s(&o.l_ltid)?),
            ("linked_span_id", s(&o.l_lsid)?),
            ("trace_state", s(&o.l_ts)?),
            ("flags", u32s(py, &o.l_flags)),
            ("attributes", s(&o.l_attr)?),
            ("dropped_attributes_count", u32s(py, &o.l_da)),
        ],
    )?;
    let bytes_or_none = |b: Option<&[u8]>| -> Py<PyAny> {
        match b {
            Some(b) => PyBytes::new(py, b).into_any().unbind(),
            None => py.None(),
        }
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned(); // validated UTF-8 already
    let resources = PyList::new(
        py,
        f.resources.iter().map(|r| (bytes_or_none(r.raw), text(r.schema_url))),
    )?;
    let groups = PyList::new(
        py,
        f.groups
            .iter()
            .map(|g| (g.resource, bytes_or_none(g.scope), text(g.schema_url), g.rows, g.retrieval)),
    )?;
    let specials = PyList::new(
        py,
        f.specials.iter().map(|sp| {
            let (a, b) = sp.attributes;
            (sp.row, sp.resource, PyBytes::new(py, &o.s_attr.data[a..b]))
        }),
    )?;
    let keys = PyList::new(py, o.keys.iter().map(|k| text(k)))?;
    PyTuple::new(
        py,
        [
            f.items.into_pyobject(py)?.into_any(),
            spans.into_any(),
            events.into_any(),
            links.into_any(),
            resources.into_any(),
            groups.into_any(),
            specials.into_any(),
            keys.into_any(),
        ],
    )
}

/// `fold_traces(payload)` → the columns of an ExportTraceServiceRequest (see otel_agent/fold/native.py), or
/// None when the Python fold must answer for it. Never raises for what the payload holds.
#[pyfunction]
fn fold_traces<'py>(py: Python<'py>, payload: &[u8]) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let folded = py.detach(|| catch_unwind(AssertUnwindSafe(|| fold(payload))).ok().flatten());
    match folded {
        Some(f) => Ok(Some(to_python(py, &f)?)),
        None => Ok(None),
    }
}

/// `json_double(d)` → the JSON text the fold writes for a double (for the differential tests).
#[pyfunction]
fn json_double_text(py: Python<'_>, d: f64) -> Bound<'_, PyBytes> {
    let mut out = Vec::new();
    json_double(&mut out, d);
    PyBytes::new(py, &out)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fold_traces, m)?)?;
    m.add_function(wrap_pyfunction!(json_double_text, m)?)?;
    Ok(())
}
