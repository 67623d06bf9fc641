//! Shared by the benchmark examples: their `--name value` arguments, and creating a site with the real
//! CLI. Not an example itself (no `main.rs`); each includes it with `#[path]`.
#![allow(dead_code)] // each example uses a subset

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// The value after `name` on the command line.
pub fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

/// Creates a site with `sitebot site create` on the data directory and returns its id.
pub fn create_site(bin: &str, dir: &str, name: &str, lang: &str) -> anyhow::Result<String> {
    let out = Command::new(bin)
        .args([
            "--data-dir", dir, "site", "create", "--name", name, "--vertical", "science", "--tier", "enterprise", "--currency", "EUR", "--lang", lang, "--json",
        ])
        .output()?;
    anyhow::ensure!(out.status.success(), "site create: {}", String::from_utf8_lossy(&out.stderr));
    let created: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    created["siteId"].as_str().map(str::to_owned).ok_or_else(|| anyhow::anyhow!("site create printed no siteId"))
}

/// Serves the data directory with the binary on a free loopback port; returns the process and a client
/// that trusts its certificate, with the base address. One address asks every question: it gets the site's
/// whole budget (`limits.visitor_share` 1), as one visitor of many never has, so a fast run is not turned
/// away with 429.
pub fn serve(bin: &str, dir: &Path) -> anyhow::Result<(Server, reqwest::Client, String)> {
    let mut server = Command::new(bin);
    // `BENCH_SERVER_LOG=FILE`: the server's log, at info, to read what it did during a run.
    match std::env::var_os("BENCH_SERVER_LOG") {
        Some(file) => server.env("RUST_LOG", "info").stderr(std::fs::File::create(file)?),
        None => server.env("RUST_LOG", "warn").stderr(Stdio::null()),
    };
    let (server, _, base) = start(server, dir)?;
    let pem = std::fs::read(dir.join("tls/cert.pem"))?;
    let client =
        reqwest::Client::builder().use_rustls_tls().tls_built_in_root_certs(false).add_root_certificate(reqwest::Certificate::from_pem(&pem)?).build()?;
    Ok((server, client, base))
}

/// A server a benchmark started: stopped when dropped, so that a run that fails midway (a `?` past its
/// start) leaves no server behind, serving and holding its data directory, as one did in session 25.
pub struct Server(pub Child);

impl std::ops::Deref for Server {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Server {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Already stopped by the run itself when it went well: then both calls only report that.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `server` (the binary, with its own settings and stderr) serving `dir` on a free port, one
/// address being every visitor (`limits.visitor_share` 1); returns it (stopped when dropped), its stdout
/// lines after the "listening on" one, and its base URL.
pub fn start(mut server: Command, dir: &Path) -> anyhow::Result<(Server, std::io::Lines<BufReader<std::process::ChildStdout>>, String)> {
    let mut server = Server(
        server
            .arg("--data-dir")
            .arg(dir)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("SITEBOT_LIMITS__VISITOR_SHARE", "1")
            .stdout(Stdio::piped())
            .spawn()?,
    );
    let mut lines = BufReader::new(server.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?).lines();
    let base = loop {
        let line = lines.next().ok_or_else(|| anyhow::anyhow!("server exited"))??;
        if let Some(addr) = line.strip_prefix("listening on ") {
            break addr.trim().to_owned();
        }
    };
    Ok((server, lines, base))
}

/// Questions a visitor might ask that neither XQuAD's Wikipedia paragraphs nor StackFAQ's web-application
/// entries answer, in 13 languages (none of them is one of `tests/api/multilingual.rs`'s off-topic
/// questions, nor of `examples/faq.rs`'s): negatives of the fits of `search::CrossLingual` and
/// `search::Faq`.
pub const VISITOR_OFF_TOPIC: &[&str] = &[
    "Wie viel kostet der Versand nach Österreich?",
    "Haben Sie am Sonntag geöffnet?",
    "Kann ich meine Bestellung stornieren?",
    "Wo finde ich meine Rechnung?",
    "¿Cuánto cuesta el envío a Portugal?",
    "¿Puedo devolver unos zapatos usados?",
    "¿Tienen aparcamiento para clientes?",
    "¿Aceptan pagos con tarjeta de crédito?",
    "Quels sont vos horaires d'ouverture le samedi ?",
    "Livrez-vous en Belgique ?",
    "Combien coûte un détartrage ?",
    "Quanto costa la spedizione in Italia?",
    "Posso pagare in contanti alla consegna?",
    "Quanto custa uma limpeza dentária?",
    "Vocês entregam no Brasil?",
    "Hoe lang duurt de levering?",
    "Kan ik een afspraak online maken?",
    "Ile kosztuje wybielanie zębów?",
    "Czy mogę zwrócić towar po trzydziestu dniach?",
    "Hur mycket kostar frakten till Sverige?",
    "Сколько стоит доставка в Москву?",
    "Можно ли записаться на приём онлайн?",
    "Kargo ücreti ne kadar?",
    "送料はいくらですか？",
    "日曜日は営業していますか？",
    "运费是多少？",
    "可以用信用卡付款吗？",
    "كم تكلفة الشحن إلى دبي؟",
    "هل يمكنني إلغاء طلبي؟",
    "Wer gewann die Tour de France 1998?",
    "¿Quién escribió Cien años de soledad?",
    "Qui a peint la Joconde ?",
    "Wie backe ich einen Apfelkuchen?",
    "¿Cómo se prepara una paella valenciana?",
    "Welche Farbe hat ein Flamingo?",
    "¿Cuántas patas tiene una araña?",
];

/// Logistic regression by Newton's method (a little ridge keeps it defined) over weighted samples
/// (features, label 0 or 1, weight); returns the `F` weights then the bias.
pub fn logistic<const F: usize>(samples: &[([f32; F], f32, f64)]) -> Vec<f64> {
    let n = F + 1;
    let mut w = vec![0f64; n];
    for _ in 0..50 {
        let (mut g, mut h) = (vec![0f64; n], vec![vec![0f64; n]; n]);
        for (x, y, weight) in samples {
            let x: Vec<f64> = x.iter().map(|&v| v as f64).chain([1.0]).collect();
            let p = 1.0 / (1.0 + (-(0..n).map(|i| w[i] * x[i]).sum::<f64>()).exp());
            for i in 0..n {
                g[i] += weight * (p - *y as f64) * x[i];
                for j in 0..n {
                    h[i][j] += weight * p * (1.0 - p) * x[i] * x[j];
                }
            }
        }
        for (i, row) in h.iter_mut().enumerate().take(n - 1) {
            g[i] += 1e-3 * w[i];
            row[i] += 1e-3;
        }
        // Solve h · step = g by Gaussian elimination with partial pivoting.
        let mut a: Vec<Vec<f64>> = (0..n).map(|i| h[i].iter().copied().chain([g[i]]).collect()).collect();
        for col in 0..n {
            let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs())).unwrap_or(col);
            a.swap(col, pivot);
            for row in col + 1..n {
                let f = a[row][col] / a[col][col];
                let pivot = a[col].clone();
                for (v, p) in a[row].iter_mut().zip(pivot).skip(col) {
                    *v -= f * p;
                }
            }
        }
        let mut step = vec![0f64; n];
        for i in (0..n).rev() {
            step[i] = (a[i][n] - (i + 1..n).map(|k| a[i][k] * step[k]).sum::<f64>()) / a[i][i];
        }
        for i in 0..n {
            w[i] -= step[i];
        }
        if step.iter().all(|s| s.abs() < 1e-9) {
            break;
        }
    }
    w
}

/// The sentence-vector experiment (`--sentences A`): the vectors of every chunk's sentences, by chunk key.
pub struct Sentences {
    chunk_weight: f32,
    vectors: std::collections::HashMap<u64, Vec<Vec<f32>>>,
}

impl Sentences {
    /// The site's sentence vectors from `sentences.bin` in the data directory, else embedded and saved
    /// there (key u64, count u32, then count × 384 f32, little-endian, per chunk).
    pub fn load_or_embed(
        store: &sitebot::store::Store,
        k: &sitebot::knowledge::Engine,
        site: &sitebot::domain::SiteId,
        file: &Path,
        chunk_weight: f32,
    ) -> anyhow::Result<Sentences> {
        let mut vectors = std::collections::HashMap::new();
        if let Ok(bytes) = std::fs::read(file) {
            let mut rest = &bytes[..];
            while !rest.is_empty() {
                let key = u64::from_le_bytes(rest[..8].try_into()?);
                let n = u32::from_le_bytes(rest[8..12].try_into()?) as usize;
                rest = &rest[12..];
                let vs = (0..n).map(|i| rest[i * 1536..(i + 1) * 1536].chunks_exact(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect()).collect();
                rest = &rest[n * 1536..];
                vectors.insert(key, vs);
            }
            println!("sentence vectors: {} chunks read from {}", vectors.len(), file.display());
            return Ok(Sentences { chunk_weight, vectors });
        }
        let mut owners = Vec::new();
        let mut texts = Vec::new();
        store.site(*site).knowledge().each_chunk_text(|key, _, heading, text| {
            let parts = split_sentences(text);
            if parts.len() >= 2 {
                for p in parts {
                    owners.push(key);
                    texts.push(format!("{heading}. {p}"));
                }
            }
        })?;
        let t = std::time::Instant::now();
        let embedded = k.embedder.embed_parallel_blocking(&texts, sitebot::knowledge::embedding::model::Purpose::Passage)?;
        println!(
            "sentence vectors: {} sentences of {} chunks embedded in {:.1}s",
            texts.len(),
            owners.iter().collect::<std::collections::HashSet<_>>().len(),
            t.elapsed().as_secs_f64()
        );
        for (key, v) in owners.into_iter().zip(embedded) {
            vectors.entry(key).or_insert_with(Vec::new).push(v);
        }
        let mut out = Vec::new();
        for (key, vs) in &vectors {
            out.extend_from_slice(&key.to_le_bytes());
            out.extend_from_slice(&(vs.len() as u32).to_le_bytes());
            for v in vs {
                v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            }
        }
        std::fs::write(file, out)?;
        Ok(Sentences { chunk_weight, vectors })
    }

    /// Gives each candidate its mixed cosine, relates them again (the cross-lingual lift and margin come
    /// from the cosines), scores them again and sorts by score (by cosine when `dense`).
    pub fn rescore(&self, ranked: &mut [sitebot::knowledge::search::Candidate], query: &[f32], fusion: &sitebot::knowledge::search::Fusion, dense: bool) {
        for c in ranked.iter_mut() {
            if let Some(vs) = self.vectors.get(&c.key) {
                let best = vs.iter().map(|v| dot(v, query)).fold(f32::MIN, f32::max);
                c.cos = self.chunk_weight * c.cos + (1.0 - self.chunk_weight) * best;
            }
        }
        sitebot::knowledge::search::relate(ranked);
        for c in ranked.iter_mut() {
            c.score = fusion.score(c);
        }
        let key = |c: &sitebot::knowledge::search::Candidate| if dense { c.cos } else { c.score };
        ranked.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.key.cmp(&b.key)));
    }

    /// Adds another site's vectors (chunk keys are unique across sites).
    pub fn merge(&mut self, other: Sentences) {
        self.vectors.extend(other.vectors);
    }
}

/// Sentences as the Python experiment split them: after `.`, `!` or `?` and white space before a capital
/// letter or a digit; a piece under 20 characters joins the sentence before it (the first joins the next).
pub fn split_sentences(text: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        if c.is_whitespace() && matches!(chars[i - 1].1, '.' | '!' | '?') {
            let next = chars[i + 1..].iter().find(|(_, c)| !c.is_whitespace());
            if next.is_some_and(|(_, n)| n.is_uppercase() || n.is_ascii_digit()) {
                parts.push(text[start..at].trim().to_owned());
                start = at;
            }
        }
    }
    parts.push(text[start..].trim().to_owned());
    let mut out: Vec<String> = Vec::new();
    for p in parts.into_iter().filter(|p| !p.is_empty()) {
        match out.last_mut() {
            Some(last) if p.chars().count() < 20 => {
                last.push(' ');
                last.push_str(&p);
            }
            _ => out.push(p),
        }
    }
    if out.len() > 1 && out[0].chars().count() < 20 {
        let first = out.remove(0);
        out[0] = format!("{first} {}", out[0]);
    }
    out
}

/// A field of /proc/PID/status in KiB ("VmRSS:", "VmHWM:"), 0 when unreadable.
pub fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The dot product of two vectors (their cosine when both are normalized, as the model's are).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}
