//! The large initializers (weights) of an ONNX model file, read once so that every session of the
//! embedder uses the same copy (`SessionBuilder::with_initializer`) instead of loading its own.
//!
//! Why: each ONNX Runtime session loads the whole model; for multilingual-e5-small that is about 100 MiB
//! a session, 54 MB of it the 4-bit word embedding (250,037 rows). Sharing the large initializers makes
//! a further session cost about a third of that, so the server can keep one session per core for
//! questions within its memory budget.
//!
//! An ONNX file is a protobuf `ModelProto`. No protobuf crate is in the build, and only five fields are
//! needed, so they are read here: `ModelProto.graph` (7), `GraphProto.initializer` (5, repeated
//! `TensorProto`), and of a tensor `dims` (1), `data_type` (2), `name` (8) and `raw_data` (9). The file is
//! walked with seeks, so only the wanted tensors' bytes are read; tensors whose values are not in
//! `raw_data` (typed fields, external data) are left to ONNX Runtime.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
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

/// A model split for sessions that share its large initializers.
pub struct Split {
    /// The model's bytes with the values of its initializers of at least `min_bytes` left in the file:
    /// each such tensor refers to its own bytes in the model file as external data (`location` the
    /// file's name, `offset`, `length`) instead of holding them. A session given those initializers
    /// (`SessionBuilder::with_initializer`) never reads the references; they keep the model valid, and
    /// right, for a session that is not given one (read from the model's directory).
    pub model: Vec<u8>,
    /// Those initializers, in file order, their bytes not read yet.
    pub initializers: Vec<Initializer>,
}

/// Splits `model` (see `Split`) in one walk that reads only the small fields of the file.
pub fn split(model: &Path, min_bytes: u64) -> std::io::Result<Split> {
    let location = model.file_name().and_then(|n| n.to_str()).ok_or_else(|| invalid("model file name is not UTF-8"))?.to_owned();
    let file = File::open(model)?;
    let size = file.metadata()?.len();
    let mut w = Walker { inner: BufReader::new(file), pos: 0 };
    let mut out = Vec::new();
    let mut initializers = Vec::new();
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
        let mut graph = Vec::new();
        loop {
            let start = w.pos;
            let Some((number, wire, len)) = w.field(graph_end)? else { break };
            let end = w.pos + if wire == LEN { len } else { 0 };
            if (number, wire) != (5, LEN) {
                w.skip_value(wire, len)?;
                let end = w.pos;
                graph.extend(w.range(start, end)?);
                continue;
            }
            let body = w.pos;
            let t = w.tensor(end)?;
            match t.raw.filter(|&(_, n)| n >= min_bytes) {
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
                    put_bytes(5, &tensor, &mut graph);
                    initializers.push(Initializer { name: t.name, data_type: t.data_type, dims: t.dims, offset, len: n });
                }
                None => graph.extend(w.range(start, end)?),
            }
        }
        put_bytes(7, &graph, &mut out);
    }
    if w.pos > size {
        return Err(invalid("truncated"));
    }
    Ok(Split { model: out, initializers })
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

        let got = split(&path, 1000).unwrap().initializers;
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].name.as_str(), got[0].data_type, got[0].dims.as_slice()), ("word_embeddings.nibbles", 2, &[1000, 3][..]));
        assert_eq!((got[1].name.as_str(), got[1].data_type, got[1].dims.as_slice()), ("scales", 10, &[750, 2][..]));
        let mut raw = vec![0u8; 3000];
        got[0].read_into(&path, &mut raw).unwrap();
        assert_eq!(raw, big);
        assert!(got[1].read_into(&path, &mut [0u8; 10]).is_err(), "a buffer of the wrong size is refused");
        assert_eq!(split(&path, 0).unwrap().initializers.len(), 3);
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

        let rewritten = split(&path, 1000).unwrap().model;
        assert!(rewritten.len() < model.len() - 4900, "the large value is not in the new bytes");
        let offset = model.windows(big.len()).position(|w| w == big.as_slice()).unwrap();
        for needle in ["location".as_bytes(), b"model.onnx", b"offset", offset.to_string().as_bytes(), b"length", b"5000", b"a node", b"graph name"] {
            assert!(rewritten.windows(needle.len()).any(|w| w == needle), "{}", String::from_utf8_lossy(needle));
        }
        let again = dir.path().join("rewritten.onnx");
        std::fs::write(&again, &rewritten).unwrap();
        // The small tensor keeps its value; the large one has none of its own now.
        let kept = split(&again, 0).unwrap().initializers;
        assert_eq!(kept.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["small"]);
        // Nothing changes below the threshold.
        assert_eq!(split(&path, 10_000).unwrap().model, model);
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
        assert!(split(&path, 1).is_err());
    }
}
