//! HTML: the visible text of the page, structured by its headings. `<title>` (else the first `<h1>`)
//! is the title and `<link rel="canonical">` the URL; scripts, styles, navigation, templates and SVG are
//! dropped with their content; block elements end paragraphs. A small scanner rather than a full HTML5
//! parser: it only has to find text, headings and two attributes, and tolerates broken markup.

use super::{Parsed, Section};
use crate::knowledge::text::squash;

/// Elements whose content is not text a visitor reads.
const DROPPED: &[&str] = &["script", "style", "nav", "noscript", "template", "svg", "iframe"];
/// Elements that end a paragraph.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "tr",
    "table",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "aside",
    "blockquote",
    "dd",
    "dt",
    "dl",
    "pre",
    "form",
    "hr",
    "figure",
    "figcaption",
    "address",
    "body",
];

/// Decodes the character references that matter for text.
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find('&') {
        out.push_str(&rest[..pos]);
        rest = &rest[pos..];
        let end = rest.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                "ndash" => Some('–'),
                "mdash" => Some('—'),
                "euro" => Some('€'),
                "auml" => Some('ä'),
                "ouml" => Some('ö'),
                "uuml" => Some('ü'),
                "Auml" => Some('Ä'),
                "Ouml" => Some('Ö'),
                "Uuml" => Some('Ü'),
                "szlig" => Some('ß'),
                _ if name.starts_with("#x") || name.starts_with("#X") => u32::from_str_radix(&name[2..], 16).ok().and_then(char::from_u32),
                _ if name.starts_with('#') => name[1..].parse().ok().and_then(char::from_u32),
                _ => None,
            };
            c.map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The value of attribute `name` in a tag's inside (`a href="x" class=y`).
fn attr(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(p) = lower[from..].find(name) {
        let at = from + p;
        from = at + name.len();
        let before_ok = at == 0 || lower.as_bytes()[at - 1].is_ascii_whitespace();
        let rest = lower[at + name.len()..].trim_start();
        if !before_ok || !rest.starts_with('=') {
            continue;
        }
        let offset = tag.len() - rest.len() + 1;
        let value = tag[offset..].trim_start();
        let v = match value.chars().next() {
            Some(q @ ('"' | '\'')) => value[1..].split(q).next().unwrap_or(""),
            _ => value.split(|c: char| c.is_whitespace() || c == '>').next().unwrap_or(""),
        };
        return Some(decode_entities(v));
    }
    None
}

pub fn parse(source: String, fallback_title: &str, src: &str) -> Parsed {
    let mut title: Option<String> = None;
    let mut url = None;
    let mut first_h1 = None;
    let mut sections = vec![Section::default()];
    let mut path: Vec<(usize, String)> = Vec::new();
    let mut text = String::new();
    let mut heading: Option<(usize, String)> = None;
    let mut in_title = false;
    let mut title_text = String::new();
    let mut rest = src;
    let flush = |text: &mut String, sections: &mut Vec<Section>| {
        let p = squash(&decode_entities(text));
        if !p.is_empty() {
            sections.last_mut().expect("a section").paragraphs.push(p);
        }
        text.clear();
    };
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            text.push_str(rest);
            break;
        };
        let chunk = &rest[..lt];
        if in_title {
            title_text.push_str(chunk);
        } else if let Some((_, h)) = heading.as_mut() {
            h.push_str(chunk);
        } else {
            text.push_str(chunk);
        }
        rest = &rest[lt..];
        if rest.starts_with("<!--") {
            rest = rest.find("-->").map_or("", |e| &rest[e + 3..]);
            continue;
        }
        let Some(gt) = rest.find('>') else { break };
        let inside = &rest[1..gt];
        rest = &rest[gt + 1..];
        let closing = inside.starts_with('/');
        let name: String = inside.trim_start_matches('/').chars().take_while(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
        if name == "title" && !closing {
            in_title = true;
            continue;
        }
        if name == "title" && closing {
            in_title = false;
            title = Some(squash(&decode_entities(&title_text))).filter(|t| !t.is_empty());
            continue;
        }
        if name == "link" && attr(inside, "rel").is_some_and(|r| r.eq_ignore_ascii_case("canonical")) {
            url = attr(inside, "href").filter(|h| h.starts_with("http"));
            continue;
        }
        if !closing && DROPPED.contains(&name.as_str()) && !inside.ends_with('/') {
            // Skip to the matching end tag (these elements do not nest in practice).
            let end = format!("</{name}");
            let lower = rest.to_ascii_lowercase();
            rest = match lower.find(&end) {
                Some(e) => rest[e..].find('>').map_or("", |g| &rest[e + g + 1..]),
                None => "",
            };
            continue;
        }
        let level = match name.as_bytes() {
            [b'h', d @ b'1'..=b'6'] => Some((d - b'0') as usize),
            _ => None,
        };
        match (level, closing) {
            (Some(level), false) => {
                flush(&mut text, &mut sections);
                heading = Some((level, String::new()));
            }
            (Some(_), true) => {
                if let Some((level, h)) = heading.take() {
                    let h = squash(&decode_entities(&h));
                    if level == 1 && first_h1.is_none() {
                        first_h1 = Some(h.clone());
                    }
                    path.retain(|(l, _)| *l < level);
                    path.push((level, h));
                    sections.push(Section { path: path.iter().map(|(_, t)| t.clone()).collect(), paragraphs: vec![] });
                }
            }
            (None, _) if BLOCKS.contains(&name.as_str()) => flush(&mut text, &mut sections),
            _ => {}
        }
    }
    flush(&mut text, &mut sections);
    let title = title.or(first_h1).unwrap_or_else(|| fallback_title.to_owned());
    for s in &mut sections {
        if s.path.first().is_some_and(|h| *h == title) {
            s.path.remove(0);
        }
    }
    sections.retain(|s| !s.paragraphs.is_empty());
    Parsed { source, title, url, format: "html", sections }
}

#[cfg(test)]
mod tests;
