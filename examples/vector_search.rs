//! What an exact vector search costs against the graph's, by site size: `cargo run --release --example
//! vector_search`. Random unit vectors of 384 dimensions in a usearch index made as a site's is (cosine,
//! bf16, connectivity 16, expansion 128 to add and 64 to search), 2,000 searches of 40 neighbours each at
//! every size, both kinds in the same minutes; prints the median and p95 in microseconds and how many of the
//! graph's 40 are the exact 40 (its recall). Why: `search::vector::EXACT_UP_TO`.

use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

fn unit(seed: &mut u64) -> Vec<f32> {
    let v: Vec<f32> = (0..384)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            (*seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

fn quantiles(mut t: Vec<f64>) -> (f64, f64) {
    t.sort_by(f64::total_cmp);
    (t[t.len() / 2], t[t.len() * 95 / 100])
}

fn main() -> anyhow::Result<()> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    println!("{:>8} {:>12} {:>12} {:>12} {:>12} {:>8}", "chunks", "graph p50", "graph p95", "exact p50", "exact p95", "recall");
    for size in [300, 1_000, 2_000, 4_000, 8_000, 12_000] {
        let options = IndexOptions {
            dimensions: 384,
            metric: MetricKind::Cos,
            quantization: ScalarKind::BF16,
            connectivity: 16,
            expansion_add: 128,
            expansion_search: 64,
            multi: false,
        };
        let index = Index::new(&options)?;
        index.reserve(size)?;
        for key in 0..size as u64 {
            index.add(key, &unit(&mut seed))?;
        }
        let queries: Vec<Vec<f32>> = (0..2_000).map(|_| unit(&mut seed)).collect();
        let (mut graph, mut exact, mut same) = (Vec::new(), Vec::new(), 0usize);
        for q in &queries {
            let t = std::time::Instant::now();
            let g = index.search(q, 40)?;
            graph.push(t.elapsed().as_secs_f64() * 1e6);
            let t = std::time::Instant::now();
            let e = index.exact_search(q, 40)?;
            exact.push(t.elapsed().as_secs_f64() * 1e6);
            same += g.keys.iter().filter(|k| e.keys.contains(k)).count();
        }
        let ((g50, g95), (e50, e95)) = (quantiles(graph), quantiles(exact));
        println!("{size:>8} {g50:>12.1} {g95:>12.1} {e50:>12.1} {e95:>12.1} {:>8.3}", same as f64 / (queries.len() * 40) as f64);
    }
    Ok(())
}
