//! The large initializers (weights) of an ONNX model file, read once so that every session of the
//! embedder uses the same copy (`SessionBuilder::with_initializer`) instead of loading its own, and the
//! word-embedding tables, which no session holds at all (`Lifted`).
//!
//! Why: each ONNX Runtime session loads the whole model; for multilingual-e5-small that is about 100 MiB
//! a session, 54 MB of it the 4-bit word embedding (250,037 rows). Sharing the large initializers makes
//! a further session cost about a third of that, so the server can keep one session per core for
//! questions within its memory budget. The word embedding is lifted out of the graph: its `Gather` by
//! `input_ids` is removed and its output becomes a graph input, which the embedder fills with the rows a
//! text's pieces look up, read from the model file (`Lifted::read_rows`, one positioned read a row).
//! A question reads a few dozen rows of a table that would otherwise be resident in full; the file's
//! pages stay in the kernel's page cache, shared and reclaimable, not in the process.
//!
//! An ONNX file is a protobuf `ModelProto`. No protobuf crate is in the build, and only a few fields are
//! needed, so they are read here: `ModelProto.graph` (7); of `GraphProto` its nodes (1), initializers (5,
//! repeated `TensorProto`) and inputs (11, `ValueInfoProto`, of which the name, 1); of a tensor `dims`
//! (1), `data_type` (2), `name` (8) and `raw_data` (9); of a node its inputs (1), outputs (2), `op_type`
//! (4), attributes (5: name 1, integer 3) and domain (7). The file is walked with seeks, so only the
//! wanted tensors' bytes are read; tensors whose values are not in `raw_data` (typed fields, external
//! data) are left to ONNX Runtime.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// One initializer: name, ONNX `TensorProto.DataType`, shape, and where its bytes (little-endian) are
/// in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Initializer {
    pub name: String,
    pub data_type: i32,
    pub dims: Vec<i64>,
    offset: u64,
    pub len: u64,
}

impl Initializer {
    /// Reads the initializer's bytes from `model` into `out`, which must be `len` bytes long (so they
    /// can go straight into a tensor's memory).
    pub fn read_into(&self, model: &Path, out: &mut [u8]) -> std::io::Result<()> {
        if out.len() as u64 != self.len {
            return Err(invalid("initializer size mismatch"));
        }
        let mut file = File::open(model)?;
        file.seek(SeekFrom::Start(self.offset))?;
        file.read_exact(out)
    }
}

/// An initializer as walked: its bytes may be missing (typed fields, external data).
struct Located {
    name: String,
    data_type: i32,
    dims: Vec<i64>,
    raw: Option<(u64, u64)>,
}

/// Protobuf wire types.
const VARINT: u64 = 0;
const FIXED64: u64 = 1;
const LEN: u64 = 2;
const FIXED32: u64 = 5;

struct Walker<R> {
    inner: R,
    pos: u64,
}

impl<R: Read + Seek> Walker<R> {
    fn byte(&mut self) -> std::io::Result<u8> {
        let mut b = [0u8; 1];
        self.inner.read_exact(&mut b)?;
        self.pos += 1;
        Ok(b[0])
    }

    fn varint(&mut self) -> std::io::Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(invalid("varint longer than 10 bytes"))
    }

    fn skip(&mut self, n: u64) -> std::io::Result<()> {
        let n = i64::try_from(n).map_err(|_| invalid("field length out of range"))?;
        self.inner.seek(SeekFrom::Current(n))?;
        self.pos += n as u64;
        Ok(())
    }

    fn bytes(&mut self, n: u64) -> std::io::Result<Vec<u8>> {
        let mut v = vec![0u8; usize::try_from(n).map_err(|_| invalid("field length out of range"))?];
        self.inner.read_exact(&mut v)?;
        self.pos += n;
        Ok(v)
    }

    /// The next field's (number, wire type) and, for a length-delimited one, its length; `None` at `end`.
    fn field(&mut self, end: u64) -> std::io::Result<Option<(u64, u64, u64)>> {
        if self.pos >= end {
            return Ok(None);
        }
        let key = self.varint()?;
        let (number, wire) = (key >> 3, key & 7);
        let len = if wire == LEN { self.varint()? } else { 0 };
        Ok(Some((number, wire, len)))
    }

    /// Skips the value of a field already started by `field`.
    fn skip_value(&mut self, wire: u64, len: u64) -> std::io::Result<()> {
        match wire {
            VARINT => self.varint().map(drop),
            FIXED64 => self.skip(8),
            LEN => self.skip(len),
            FIXED32 => self.skip(4),
            _ => Err(invalid("unsupported protobuf wire type")),
        }
    }

    fn tensor(&mut self, end: u64) -> std::io::Result<Located> {
        let mut t = Located { name: String::new(), data_type: 0, dims: Vec::new(), raw: None };
        while let Some((number, wire, len)) = self.field(end)? {
            match (number, wire) {
                (1, VARINT) => t.dims.push(self.varint()? as i64),
                (1, LEN) => {
                    let stop = self.pos + len;
                    while self.pos < stop {
                        t.dims.push(self.varint()? as i64);
                    }
                }
                (2, VARINT) => t.data_type = self.varint()? as i32,
                (8, LEN) => t.name = String::from_utf8(self.bytes(len)?).map_err(|_| invalid("tensor name is not UTF-8"))?,
                (9, LEN) => {
                    t.raw = Some((self.pos, len));
                    self.skip(len)?;
                }
                _ => self.skip_value(wire, len)?,
            }
        }
        Ok(t)
    }
}

fn invalid(why: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not a readable ONNX model: {why}"))
}

impl<R: Read + Seek> Walker<R> {
    /// The bytes of `start..end`, already walked; the walk goes on at `end`.
    fn range(&mut self, start: u64, end: u64) -> std::io::Result<Vec<u8>> {
        self.inner.seek(SeekFrom::Start(start))?;
        self.pos = start;
        let out = self.bytes(end - start)?;
        Ok(out)
    }
}

fn put_varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(number: u64, body: &[u8], out: &mut Vec<u8>) {
    put_varint(number << 3 | LEN, out);
    put_varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

/// A model split for sessions that share its large initializers and read its word embedding from the
/// file.
pub struct Split {
    /// The model's bytes with the values of its initializers of at least `min_bytes` left in the file:
    /// each such tensor refers to its own bytes in the model file as external data (`location` the
    /// file's name, `offset`, `length`) instead of holding them. A session given those initializers
    /// (`SessionBuilder::with_initializer`) never reads the references; they keep the model valid, and
    /// right, for a session that is not given one (read from the model's directory). The lifted tables
    /// and the `Gather` nodes that read them are gone; their outputs are graph inputs.
    pub model: Vec<u8>,
    /// Those initializers, in file order, their bytes not read yet.
    pub initializers: Vec<Initializer>,
    /// The tables lifted out of the graph, in file order.
    pub lifted: Vec<Lifted>,
}

/// A table the graph gathered rows of by its `input_ids` (a word embedding), lifted out of it: the
/// `Gather`'s output is now the graph input `input`, of shape `[batch, sequence, row_len]`, and the
/// caller fills it with the rows of the pieces (`read_rows`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifted {
    /// The graph input the rows go to (the removed `Gather`'s output).
    pub input: String,
    /// ONNX `TensorProto.DataType` of the table.
    pub data_type: i32,
    /// Rows of the table (valid ids are `0..rows`).
    pub rows: u64,
    /// Values a row.
    pub row_len: usize,
    /// Bytes a row.
    pub row_bytes: u64,
    /// Where row 0 is in the file.
    offset: u64,
}

impl Lifted {
    /// The rows of `ids`, one after the other, read from `model` (the file the table was lifted from)
    /// with one positioned read a row: a piece id outside the table is an error.
    pub fn read_rows(&self, model: &File, ids: &[i64]) -> std::io::Result<Vec<u8>> {
        let row = self.row_bytes as usize;
        let mut out = vec![0u8; ids.len() * row];
        for (&id, dst) in ids.iter().zip(out.chunks_exact_mut(row)) {
            let id = u64::try_from(id).ok().filter(|&i| i < self.rows).ok_or_else(|| invalid("a piece id outside the word embedding"))?;
            model.read_exact_at(dst, self.offset + id * self.row_bytes)?;
        }
        Ok(out)
    }
}

/// Bytes of one value of an ONNX data type the embedder reads (FLOAT, UINT8, INT8, FLOAT16).
pub fn value_bytes(data_type: i32) -> Option<u64> {
    match data_type {
        1 => Some(4),
        2 | 3 => Some(1),
        10 => Some(2),
        _ => None,
    }
}

/// What the walk keeps of a graph field besides its bytes.
enum Kind {
    Node {
        op_type: String,
        domain: String,
        inputs: Vec<String>,
        outputs: Vec<String>,
        axis: i64,
    },
    /// `shared`: its value is left in the file (at least `min_bytes` of raw data), for the sessions to share.
    Initializer {
        name: String,
        dims: Vec<i64>,
        data_type: i32,
        raw: Option<(u64, u64)>,
        shared: bool,
    },
    Input(String),
    Other,
}

impl<R: Read + Seek> Walker<R> {
    fn string(&mut self, len: u64) -> std::io::Result<String> {
        String::from_utf8(self.bytes(len)?).map_err(|_| invalid("a name is not UTF-8"))
    }

    /// A `NodeProto`'s inputs, outputs, op type, domain and `axis` attribute (0 when absent).
    fn node(&mut self, end: u64) -> std::io::Result<Kind> {
        let (mut op_type, mut domain, mut inputs, mut outputs, mut axis) = (String::new(), String::new(), Vec::new(), Vec::new(), 0);
        while let Some((number, wire, len)) = self.field(end)? {
            match (number, wire) {
                (1, LEN) => inputs.push(self.string(len)?),
                (2, LEN) => outputs.push(self.string(len)?),
                (4, LEN) => op_type = self.string(len)?,
                (7, LEN) => domain = self.string(len)?,
                (5, LEN) => {
                    let stop = self.pos + len;
                    let (mut name, mut value) = (String::new(), None);
                    while let Some((number, wire, len)) = self.field(stop)? {
                        match (number, wire) {
                            (1, LEN) => name = self.string(len)?,
                            (3, VARINT) => value = Some(self.varint()? as i64),
                            _ => self.skip_value(wire, len)?,
                        }
                    }
                    if name == "axis" {
                        axis = value.unwrap_or(0);
                    }
                }
                _ => self.skip_value(wire, len)?,
            }
        }
        Ok(Kind::Node { op_type, domain, inputs, outputs, axis })
    }

    /// A `ValueInfoProto`'s name.
    fn value_info_name(&mut self, end: u64) -> std::io::Result<String> {
        let mut name = String::new();
        while let Some((number, wire, len)) = self.field(end)? {
            match (number, wire) {
                (1, LEN) => name = self.string(len)?,
                _ => self.skip_value(wire, len)?,
            }
        }
        Ok(name)
    }
}

/// The graph input a lifted table's rows go to: `[batch, sequence, row_len]` of the table's type.
fn lifted_input(lifted: &Lifted) -> Vec<u8> {
    let mut shape = Vec::new();
    for param in ["batch", "sequence"] {
        let mut dim = Vec::new();
        put_bytes(2, param.as_bytes(), &mut dim);
        put_bytes(1, &dim, &mut shape);
    }
    let mut dim = Vec::new();
    put_varint(1 << 3 | VARINT, &mut dim);
    put_varint(lifted.row_len as u64, &mut dim);
    put_bytes(1, &dim, &mut shape);
    let mut tensor = Vec::new();
    put_varint(1 << 3 | VARINT, &mut tensor);
    put_varint(lifted.data_type as u64, &mut tensor);
    put_bytes(2, &shape, &mut tensor);
    let mut type_proto = Vec::new();
    put_bytes(1, &tensor, &mut type_proto);
    let mut info = Vec::new();
    put_bytes(1, lifted.input.as_bytes(), &mut info);
    put_bytes(2, &type_proto, &mut info);
    info
}

/// The graph input whose rows a lifted table is gathered by.
const PIECE_IDS: &str = "input_ids";

/// Splits `model` (see `Split`) in one walk that reads only the small fields of the file. With `lift`,
/// every table that one `Gather` (axis 0) reads rows of by the graph input `input_ids`, and nothing else
/// reads, is lifted out of the graph (`Lifted`).
pub fn split(model: &Path, min_bytes: u64, lift: bool) -> std::io::Result<Split> {
    let location = model.file_name().and_then(|n| n.to_str()).ok_or_else(|| invalid("model file name is not UTF-8"))?.to_owned();
    let file = File::open(model)?;
    let size = file.metadata()?.len();
    let mut w = Walker { inner: BufReader::new(file), pos: 0 };
    let mut out = Vec::new();
    let mut initializers = Vec::new();
    let mut lifted = Vec::new();
    loop {
        let start = w.pos;
        let Some((number, wire, len)) = w.field(size)? else { break };
        if (number, wire) != (7, LEN) {
            w.skip_value(wire, len)?;
            let end = w.pos;
            out.extend(w.range(start, end)?);
            continue;
        }
        let graph_end = w.pos + len;
        // Every field of the graph as it will be written, with what the lifting needs to know of it.
        let mut fields: Vec<(Kind, Vec<u8>)> = Vec::new();
        loop {
            let start = w.pos;
            let Some((number, wire, len)) = w.field(graph_end)? else { break };
            let end = w.pos + if wire == LEN { len } else { 0 };
            let kind = match (number, wire) {
                // Nodes and inputs are read only to lift tables; otherwise they are copied unread.
                (1, LEN) if lift => w.node(end)?,
                (11, LEN) if lift => Kind::Input(w.value_info_name(end)?),
                (5, LEN) => {
                    let body = w.pos;
                    let t = w.tensor(end)?;
                    let shared = t.raw.filter(|&(_, n)| n >= min_bytes);
                    let bytes = match shared {
                        Some((offset, n)) => {
                            // The tensor's fields up to its raw_data (its key and length included), then the
                            // ones after it, then the external data reference.
                            let key = offset - 1 - varint_len(n) as u64;
                            let mut tensor = w.range(body, key)?;
                            tensor.extend(w.range(offset + n, end)?);
                            for (k, v) in [("location", location.as_str()), ("offset", &offset.to_string()), ("length", &n.to_string())] {
                                let mut entry = Vec::new();
                                put_bytes(1, k.as_bytes(), &mut entry);
                                put_bytes(2, v.as_bytes(), &mut entry);
                                put_bytes(13, &entry, &mut tensor);
                            }
                            // data_location = EXTERNAL
                            put_varint(14 << 3 | VARINT, &mut tensor);
                            put_varint(1, &mut tensor);
                            let mut field = Vec::new();
                            put_bytes(5, &tensor, &mut field);
                            field
                        }
                        None => w.range(start, end)?,
                    };
                    fields.push((Kind::Initializer { name: t.name, dims: t.dims, data_type: t.data_type, raw: t.raw, shared: shared.is_some() }, bytes));
                    continue;
                }
                _ => {
                    w.skip_value(wire, len)?;
                    Kind::Other
                }
            };
            if wire == LEN && w.pos != end {
                return Err(invalid("a graph field overran its length"));
            }
            let end = w.pos;
            fields.push((kind, w.range(start, end)?));
        }

        // The tables to lift, by name, with the index of the node that gathers them.
        let mut lift_nodes = std::collections::HashMap::new();
        if lift && fields.iter().any(|(k, _)| matches!(k, Kind::Input(n) if n == PIECE_IDS)) {
            let mut readers: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
            for (k, _) in &fields {
                if let Kind::Node { inputs, .. } = k {
                    for i in inputs {
                        *readers.entry(i.as_str()).or_default() += 1;
                    }
                }
            }
            for (index, (k, _)) in fields.iter().enumerate() {
                let Kind::Node { op_type, domain, inputs, outputs, axis } = k else { continue };
                if op_type != "Gather" || !domain.is_empty() || *axis != 0 || inputs.len() != 2 || inputs[1] != PIECE_IDS || outputs.len() != 1 {
                    continue;
                }
                if readers.get(inputs[0].as_str()) == Some(&1) {
                    lift_nodes.insert(inputs[0].clone(), (index, outputs[0].clone()));
                }
            }
        }
        let (mut dropped, mut lifted_tables) = (std::collections::HashSet::new(), std::collections::HashSet::new());
        for (k, _) in &fields {
            let Kind::Initializer { name, dims, data_type, raw: Some((offset, n)), .. } = k else { continue };
            let Some((node, output)) = lift_nodes.get(name) else { continue };
            let Some(width) = value_bytes(*data_type) else { continue };
            let &[rows, row_len] = dims.as_slice() else { continue };
            let (Ok(rows), Ok(row_len)) = (u64::try_from(rows), usize::try_from(row_len)) else { continue };
            if rows == 0 || rows * row_len as u64 * width != *n {
                return Err(invalid("a word embedding's size does not match its shape"));
            }
            dropped.insert(*node);
            lifted_tables.insert(name.as_str());
            lifted.push(Lifted { input: output.clone(), data_type: *data_type, rows, row_len, row_bytes: row_len as u64 * width, offset: *offset });
        }
        let mut graph = Vec::new();
        for (index, (kind, bytes)) in fields.iter().enumerate() {
            match kind {
                Kind::Node { .. } if dropped.contains(&index) => {}
                Kind::Initializer { name, .. } if lifted_tables.contains(name.as_str()) => {}
                Kind::Initializer { name, dims, data_type, raw: Some((offset, n)), shared: true } => {
                    initializers.push(Initializer { name: name.clone(), data_type: *data_type, dims: dims.clone(), offset: *offset, len: *n });
                    graph.extend_from_slice(bytes);
                }
                _ => graph.extend_from_slice(bytes),
            }
        }
        for l in &lifted {
            put_bytes(11, &lifted_input(l), &mut graph);
        }
        put_bytes(7, &graph, &mut out);
    }
    if w.pos > size {
        return Err(invalid("truncated"));
    }
    Ok(Split { model: out, initializers, lifted })
}

/// Bytes of `v` as a varint.
fn varint_len(v: u64) -> usize {
    (64 - v.max(1).leading_zeros() as usize).div_ceil(7)
}

#[cfg(test)]
mod tests {
    use crate::knowledge::embedding::onnx_initializers::*;

    // Test models are written with the encoder the rewrite uses.
    use crate::knowledge::embedding::onnx_initializers::{put_bytes as len_field, put_varint as varint};

    /// A TensorProto with unpacked or packed dims, as serializers write them.
    fn tensor(name: &str, dims: &[i64], data_type: u64, raw: &[u8], packed: bool) -> Vec<u8> {
        let mut t = Vec::new();
        if packed {
            let mut d = Vec::new();
            dims.iter().for_each(|&x| varint(x as u64, &mut d));
            len_field(1, &d, &mut t);
        } else {
            for &x in dims {
                varint(1 << 3 | VARINT, &mut t);
                varint(x as u64, &mut t);
            }
        }
        varint(2 << 3 | VARINT, &mut t);
        varint(data_type, &mut t);
        len_field(8, name.as_bytes(), &mut t);
        len_field(9, raw, &mut t);
        t
    }

    #[test]
    fn reads_the_large_raw_initializers_of_a_model_and_skips_the_rest() {
        let mut graph = Vec::new();
        len_field(1, b"node bytes that are not read", &mut graph);
        len_field(5, &tensor("small", &[2], 1, &[1, 2, 3, 4, 5, 6, 7, 8], false), &mut graph);
        let big: Vec<u8> = (0..=255).cycle().take(3000).collect();
        len_field(5, &tensor("word_embeddings.nibbles", &[1000, 3], 2, &big, true), &mut graph);
        len_field(5, &tensor("scales", &[750, 2], 10, &big[..3000], false), &mut graph);
        let mut model = Vec::new();
        varint(1 << 3 | VARINT, &mut model); // ir_version
        varint(8, &mut model);
        varint(5 << 3 | FIXED64, &mut model);
        model.extend_from_slice(&[0; 8]);
        len_field(7, &graph, &mut model);
        len_field(14, b"trailing metadata", &mut model);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.onnx");
        std::fs::write(&path, &model).unwrap();

        let got = split(&path, 1000, false).unwrap().initializers;
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].name.as_str(), got[0].data_type, got[0].dims.as_slice()), ("word_embeddings.nibbles", 2, &[1000, 3][..]));
        assert_eq!((got[1].name.as_str(), got[1].data_type, got[1].dims.as_slice()), ("scales", 10, &[750, 2][..]));
        let mut raw = vec![0u8; 3000];
        got[0].read_into(&path, &mut raw).unwrap();
        assert_eq!(raw, big);
        assert!(got[1].read_into(&path, &mut [0u8; 10]).is_err(), "a buffer of the wrong size is refused");
        assert_eq!(split(&path, 0, false).unwrap().initializers.len(), 3);
    }

    #[test]
    fn a_models_large_values_are_left_in_the_file_by_reference() {
        let big: Vec<u8> = (0..=255).cycle().take(5000).collect();
        let mut graph = Vec::new();
        len_field(1, b"a node", &mut graph);
        len_field(5, &tensor("small", &[2], 1, &[9; 8], false), &mut graph);
        len_field(5, &tensor("big", &[5000], 2, &big, true), &mut graph);
        len_field(2, b"graph name", &mut graph);
        let mut model = Vec::new();
        varint(1 << 3 | VARINT, &mut model);
        varint(8, &mut model);
        len_field(7, &graph, &mut model);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.onnx");
        std::fs::write(&path, &model).unwrap();

        let rewritten = split(&path, 1000, false).unwrap().model;
        assert!(rewritten.len() < model.len() - 4900, "the large value is not in the new bytes");
        let offset = model.windows(big.len()).position(|w| w == big.as_slice()).unwrap();
        for needle in ["location".as_bytes(), b"model.onnx", b"offset", offset.to_string().as_bytes(), b"length", b"5000", b"a node", b"graph name"] {
            assert!(rewritten.windows(needle.len()).any(|w| w == needle), "{}", String::from_utf8_lossy(needle));
        }
        let again = dir.path().join("rewritten.onnx");
        std::fs::write(&again, &rewritten).unwrap();
        // The small tensor keeps its value; the large one has none of its own now.
        let kept = split(&again, 0, false).unwrap().initializers;
        assert_eq!(kept.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["small"]);
        // Nothing changes below the threshold.
        assert_eq!(split(&path, 10_000, false).unwrap().model, model);
    }

    /// A model whose graph gathers the rows of `table` by `input_ids` for one node and, with `twice`, reads
    /// the table in a second node too.
    fn gathering_model(table: &[u8], twice: bool) -> Vec<u8> {
        let mut graph = Vec::new();
        let node = |inputs: &[&str], output: &str, op: &str, axis: Option<u64>| {
            let mut n = Vec::new();
            inputs.iter().for_each(|i| len_field(1, i.as_bytes(), &mut n));
            len_field(2, output.as_bytes(), &mut n);
            len_field(4, op.as_bytes(), &mut n);
            if let Some(axis) = axis {
                let mut a = Vec::new();
                len_field(1, b"axis", &mut a);
                varint(3 << 3 | VARINT, &mut a);
                varint(axis, &mut a);
                len_field(5, &a, &mut n);
            }
            n
        };
        len_field(1, &node(&["table", "input_ids"], "rows", "Gather", Some(0)), &mut graph);
        len_field(1, &node(&["rows"], "out", "Relu", None), &mut graph);
        if twice {
            len_field(1, &node(&["table"], "shape", "Shape", None), &mut graph);
        }
        len_field(5, &tensor("table", &[5, 4], 2, table, true), &mut graph);
        let mut input = Vec::new();
        len_field(1, b"input_ids", &mut input);
        len_field(11, &input, &mut graph);
        let mut model = Vec::new();
        varint(1 << 3 | VARINT, &mut model);
        varint(8, &mut model);
        len_field(7, &graph, &mut model);
        model
    }

    #[test]
    fn a_table_gathered_by_the_piece_ids_is_lifted_out_of_the_graph_and_read_a_row_at_a_time() {
        let table: Vec<u8> = (100..120).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.onnx");
        std::fs::write(&path, gathering_model(&table, false)).unwrap();

        let lifting = split(&path, 8, true).unwrap();
        assert!(lifting.initializers.is_empty(), "a lifted table is not shared either");
        let [lifted] = lifting.lifted.as_slice() else { panic!("{:?}", lifting.lifted) };
        assert_eq!((lifted.input.as_str(), lifted.data_type, lifted.rows, lifted.row_len, lifted.row_bytes), ("rows", 2, 5, 4, 4));
        let file = File::open(&path).unwrap();
        assert_eq!(lifted.read_rows(&file, &[4, 0, 4]).unwrap(), [116, 117, 118, 119, 100, 101, 102, 103, 116, 117, 118, 119]);
        assert!(lifted.read_rows(&file, &[5]).is_err(), "an id past the table");
        assert!(lifted.read_rows(&file, &[-1]).is_err(), "a negative id");
        // The table, its Gather and its reference are gone; the Gather's output is a graph input now.
        let m = &lifting.model;
        let has = |needle: &[u8]| m.windows(needle.len()).any(|w| w == needle);
        assert!(!has(&table[..8]) && !has(b"Gather") && !has(b"table") && !has(b"location"));
        assert!(has(b"Relu") && has(b"input_ids") && has(b"sequence"));
        // Without lifting, or when another node reads the table, it stays where it was.
        assert!(split(&path, 8, false).unwrap().lifted.is_empty());
        std::fs::write(&path, gathering_model(&table, true)).unwrap();
        let read_twice = split(&path, 8, true).unwrap();
        assert!(read_twice.lifted.is_empty());
        assert_eq!(read_twice.initializers.len(), 1);
    }

    #[test]
    fn a_truncated_file_is_an_error_not_a_panic() {
        let mut graph = Vec::new();
        len_field(5, &tensor("w", &[4], 1, &[0; 16], false), &mut graph);
        let mut model = Vec::new();
        len_field(7, &graph, &mut model);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.onnx");
        std::fs::write(&path, &model[..model.len() - 5]).unwrap();
        assert!(split(&path, 1, false).is_err());
    }
}
