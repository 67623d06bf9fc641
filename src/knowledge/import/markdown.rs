//! Markdown: optional front matter (`title:`, `url:`), then CommonMark with tables, read by
//! pulldown-cmark (linear on hostile input). Headings open sections; blank lines separate paragraphs;
//! the items of a list stay together in one paragraph, joined by `; ` unless they end in punctuation;
//! a table's header row is a paragraph and its body rows another, cells joined by `, `; code blocks
//! and quotes are text like any other. Inline markup is reduced to its text: links keep their label,
//! images and HTML tags go, entities are decoded; an HTML block keeps its visible text.

use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use crate::knowledge::import::{Parsed, Section};
use crate::knowledge::text::squash;

/// Splits `---` front matter off; returns (key/value pairs, body).
fn front_matter(src: &str) -> (Vec<(String, String)>, &str) {
    let Some(rest) = src.strip_prefix("---\n").or_else(|| src.strip_prefix("---\r\n")) else { return (vec![], src) };
    let Some(end) = rest.find("\n---") else { return (vec![], src) };
    let pairs =
        rest[..end].lines().filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_lowercase(), v.trim().trim_matches(['"', '\'']).to_owned())).collect();
    let body = rest[end + 4..].trim_start_matches(['-']).trim_start_matches(['\r', '\n']);
    (pairs, body)
}

/// Does a blank line separate `src[from..to]`'s two ends? (Then they are two paragraphs.)
fn blank_line_between(src: &str, from: usize, to: usize) -> bool {
    let mut lines = src[from..to].split('\n');
    let first = lines.next().unwrap_or("");
    let rest: Vec<&str> = lines.collect();
    let starts_a_line = from == 0 || src.as_bytes()[from - 1] == b'\n';
    // The last piece is the line the next block starts on, not a whole line.
    (starts_a_line && !rest.is_empty() && first.trim().is_empty()) || rest.iter().rev().skip(1).any(|l| l.trim().is_empty())
}

/// Builds sections from pulldown-cmark's events.
struct Reader<'a> {
    src: &'a str,
    sections: Vec<Section>,
    path: Vec<(usize, String)>,
    paragraph: String,
    heading: Option<(usize, String)>,
    first_h1: Option<String>,
    /// Where the last text read ended: a block starting after a blank line begins a new paragraph.
    last_end: usize,
    /// Open lists: ordered or not.
    lists: Vec<bool>,
    images: usize,
    html: Option<String>,
    first_cell: bool,
}

impl<'a> Reader<'a> {
    fn new(src: &'a str) -> Self {
        Reader {
            src,
            sections: vec![Section::default()],
            path: vec![],
            paragraph: String::new(),
            heading: None,
            first_h1: None,
            last_end: 0,
            lists: vec![],
            images: 0,
            html: None,
            first_cell: false,
        }
    }

    fn flush(&mut self) {
        let p = squash(&self.paragraph);
        if !p.is_empty() {
            self.sections.last_mut().expect("a section").paragraphs.push(p);
        }
        self.paragraph.clear();
    }

    /// A block (paragraph, list item, table row, code) starts at `at`: it continues the paragraph
    /// unless a blank line comes first. `item` is a bulleted list item's marker.
    fn begin(&mut self, at: usize, item: bool) {
        let from = self.last_end.min(at);
        self.last_end = self.last_end.max(at);
        if self.paragraph.is_empty() || self.heading.is_some() {
            return;
        }
        if blank_line_between(self.src, from, at) {
            return self.flush();
        }
        // List items read as one sentence with semicolons unless they bring their own stops.
        let stop = self.paragraph.trim_end().ends_with(['.', ':', '!', '?', ';', ',']);
        self.paragraph.push_str(if item && !stop { "; " } else { " " });
    }

    fn push(&mut self, text: &str, range: &Range<usize>) {
        if self.images > 0 {
            return;
        }
        match (&mut self.heading, &mut self.html) {
            (_, Some(html)) => html.push_str(text),
            (Some((_, h)), None) => h.push_str(text),
            (None, None) => self.paragraph.push_str(text),
        }
        self.last_end = self.last_end.max(range.end);
    }

    fn end_heading(&mut self) {
        let Some((level, raw)) = self.heading.take() else { return };
        let h = squash(&raw);
        // An empty heading names nothing: the section goes on.
        if h.is_empty() {
            return;
        }
        if level == 1 && self.first_h1.is_none() {
            self.first_h1 = Some(h.clone());
        }
        self.path.retain(|(l, _)| *l < level);
        self.path.push((level, h));
        self.sections.push(Section { path: self.path.iter().map(|(_, t)| t.clone()).collect(), paragraphs: vec![] });
    }

    fn event(&mut self, event: Event, range: Range<usize>) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                self.flush();
                self.heading = Some((level as usize, String::new()));
            }
            Event::End(TagEnd::Heading(_)) => self.end_heading(),
            Event::Start(Tag::List(first)) => self.lists.push(first.is_some()),
            Event::End(TagEnd::List(_)) => {
                self.lists.pop();
            }
            Event::Start(Tag::Item) => {
                let ordered = self.lists.last().copied().unwrap_or(false);
                self.begin(range.start, !ordered);
                if ordered {
                    // The number stays, as written (`1.` or `1)`).
                    let marker = self.src[range.clone()].split_whitespace().next().unwrap_or("");
                    self.paragraph.push_str(marker);
                    self.paragraph.push(' ');
                }
            }
            Event::Start(Tag::Paragraph | Tag::TableHead | Tag::TableRow) => {
                self.begin(range.start, false);
                self.first_cell = true;
            }
            // A code block's text is read whole, blank lines included.
            Event::Start(Tag::CodeBlock(_)) => self.begin(range.start, false),
            Event::Start(Tag::TableCell) => {
                let first = std::mem::take(&mut self.first_cell);
                if !first {
                    self.paragraph.push_str(", ");
                }
            }
            // The header row is a paragraph of its own.
            Event::End(TagEnd::TableHead) => self.flush(),
            Event::Start(Tag::HtmlBlock) => {
                self.begin(range.start, false);
                self.html = Some(String::new());
            }
            Event::End(TagEnd::HtmlBlock) => {
                let html = self.html.take().unwrap_or_default();
                let page = crate::knowledge::import::html::parse(String::new(), "", &html);
                let text: Vec<String> = page.sections.into_iter().flat_map(|s| s.path.into_iter().chain(s.paragraphs)).collect();
                self.push(&text.join(" "), &range);
            }
            Event::Start(Tag::Image { .. }) => self.images += 1,
            Event::End(TagEnd::Image) => self.images -= 1,
            Event::Text(t) | Event::Code(t) => self.push(&t, &range),
            Event::Html(t) => self.push(&t, &range),
            Event::SoftBreak | Event::HardBreak => self.push(" ", &range),
            Event::Rule => self.flush(),
            _ => {}
        }
    }
}

pub fn parse(source: String, fallback_title: &str, src: &str) -> Parsed {
    let (meta, body) = front_matter(src);
    let get = |k: &str| meta.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone()).filter(|v| !v.is_empty());
    let mut reader = Reader::new(body);
    for (event, range) in Parser::new_ext(body, Options::ENABLE_TABLES).into_offset_iter() {
        reader.event(event, range);
    }
    reader.end_heading();
    reader.flush();
    let title = get("title").or(reader.first_h1).unwrap_or_else(|| fallback_title.to_owned());
    let mut sections = reader.sections;
    // The document's own H1 is its title, not a section of it.
    for s in &mut sections {
        if s.path.first().is_some_and(|h| *h == title) {
            s.path.remove(0);
        }
    }
    sections.retain(|s| !s.paragraphs.is_empty());
    Parsed { source, title, url: get("url"), format: "markdown", sections }
}

#[cfg(test)]
mod tests;
