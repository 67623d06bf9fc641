//! How the HTML and Markdown parsers scale on hostile input: prints the milliseconds one parse takes
//! for 100 KB, 1 MB and 4 MB of each pattern. A linear parser takes about 10 × and 40 × the 100 KB
//! time; a quadratic one 100 × and 1,600 ×. A pattern whose parse takes longer than `GIVE_UP` is
//! not tried at the larger sizes. Run: `cargo bench --bench parsers` (figures, not a criterion harness).

use std::time::{Duration, Instant};

use sitebot::knowledge::import::{html, markdown};

const SIZES: [usize; 3] = [100 << 10, 1 << 20, 4 << 20];
const GIVE_UP: Duration = Duration::from_secs(30);

/// `unit` repeated up to `len` bytes.
fn repeat(unit: &str, len: usize) -> String {
    unit.repeat(len / unit.len())
}

/// `len` bytes of nested elements: `depth` openings, some text, no closings.
fn nested(open: &str, len: usize) -> String {
    let mut s = repeat(open, len.saturating_sub(16));
    s.push_str("deep text");
    s
}

/// Pieces numbered from 0, up to `len` bytes.
fn numbered(len: usize, piece: fn(usize) -> String) -> String {
    let mut s = String::with_capacity(len);
    for i in 0.. {
        if s.len() >= len {
            break;
        }
        s.push_str(&piece(i));
    }
    s
}

type Parser = fn(&str) -> usize;
/// A pattern's name, its parser and how to make `len` bytes of it.
type Case = (&'static str, Parser, fn(usize) -> String);

fn parse_html(s: &str) -> usize {
    html::parse("bench.html".into(), "bench", s).sections.len()
}

fn parse_markdown(s: &str) -> usize {
    markdown::parse("bench.md".into(), "bench", s).sections.len()
}

fn main() {
    let cases: [Case; 12] = [
        ("html  <a<a<a…", parse_html, |n| repeat("<a", n)),
        ("html  &&&&…", parse_html, |n| repeat("&", n)),
        ("html  <<<<…", parse_html, |n| repeat("<", n)),
        ("html  <svg></svg>…", parse_html, |n| repeat("<svg></svg>", n)),
        ("html  <div> nested", parse_html, |n| nested("<div>", n)),
        ("html  <p>text</p>…", parse_html, |n| repeat("<p>Some ordinary text &amp; more.</p>\n", n)),
        // Where html5ever's tree builder is quadratic: misnested formatting elements, and one tag's attributes.
        ("html  <p><b id=N>x</p>…", parse_html, |n| numbered(n, |i| format!("<p><b id={i}>x</p>"))),
        ("html  <p a0 a1 a2…", parse_html, |n| format!("<p{}>", numbered(n, |i| format!(" a{i}")))),
        ("md    [[[[…", parse_markdown, |n| repeat("[", n)),
        ("md    <<<<…", parse_markdown, |n| repeat("<", n)),
        ("md    - [a](…", parse_markdown, |n| repeat("- [a](b) *c* `d`\n", n)),
        // Each HTML block is read by the HTML parser: many small ones.
        ("md    <div>x</div>…", parse_markdown, |n| repeat("<div>x</div>\n\n", n)),
    ];
    println!("{:<22} {:>10} {:>10} {:>10}", "input", "100 KB", "1 MB", "4 MB");
    for (name, parser, make) in cases {
        print!("{name:<22}");
        let mut gave_up = false;
        for size in SIZES {
            if gave_up {
                print!(" {:>10}", "skipped");
                continue;
            }
            let input = make(size);
            let started = Instant::now();
            std::hint::black_box(parser(std::hint::black_box(&input)));
            let took = started.elapsed();
            print!(" {:>10}", format!("{:.1} ms", took.as_secs_f64() * 1e3));
            gave_up = took > GIVE_UP;
            // Flushes each figure as it comes: a quadratic case can take minutes.
            use std::io::Write;
            std::io::stdout().flush().ok();
        }
        println!();
    }
}
