//! Markdown: optional front matter (`title:`, `url:`), ATX headings (`#` to `######`) open sections,
//! blank lines separate paragraphs, list items stay together in their paragraph. Inline markup is
//! reduced to its text: links keep their label, images and HTML tags go, emphasis and code marks go.

use super::{Parsed, Section};

/// Splits `---` front matter off; returns (key/value pairs, body).
fn front_matter(src: &str) -> (Vec<(String, String)>, &str) {
    let Some(rest) = src.strip_prefix("---\n").or_else(|| src.strip_prefix("---\r\n")) else { return (vec![], src) };
    let Some(end) = rest.find("\n---") else { return (vec![], src) };
    let pairs =
        rest[..end].lines().filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_lowercase(), v.trim().trim_matches(['"', '\'']).to_owned())).collect();
    let body = rest[end + 4..].trim_start_matches(['-']).trim_start_matches(['\r', '\n']);
    (pairs, body)
}

/// Reduces inline Markdown to plain text.
pub fn inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '!' if chars.get(i + 1) == Some(&'[') => {
                // Image: drop it, alt text included.
                if let Some(close) = find(&chars, i + 2, ']') {
                    i = skip_target(&chars, close + 1);
                    continue;
                }
                out.push(c);
            }
            '[' => {
                if let Some(close) = find(&chars, i + 1, ']')
                    && chars.get(close + 1) == Some(&'(')
                {
                    out.extend(&chars[i + 1..close]);
                    i = skip_target(&chars, close + 1);
                    continue;
                }
                out.push(c);
            }
            '<' => match find(&chars, i + 1, '>') {
                Some(close) if chars.get(i + 1).is_some_and(|n| n.is_ascii_alphabetic() || *n == '/') => i = close,
                _ => out.push(c),
            },
            '*' | '`' => {}
            '_' if out.ends_with(|p: char| !p.is_alphanumeric()) || out.is_empty() || chars.get(i + 1).is_none_or(|n| !n.is_alphanumeric()) => {}
            '\\' if chars.get(i + 1).is_some_and(|n| n.is_ascii_punctuation()) => {
                out.push(chars[i + 1]);
                i += 1;
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

fn find(chars: &[char], from: usize, c: char) -> Option<usize> {
    chars.iter().skip(from).position(|&x| x == c).map(|p| p + from)
}

/// Skips a `(target)` starting at `at`, if there is one; returns the index after it.
fn skip_target(chars: &[char], at: usize) -> usize {
    if chars.get(at) == Some(&'(')
        && let Some(close) = find(chars, at + 1, ')')
    {
        return close + 1;
    }
    at
}

fn heading(line: &str) -> Option<(usize, String)> {
    let t = line.trim_start();
    let level = t.chars().take_while(|&c| c == '#').count();
    if (1..=6).contains(&level) && t[level..].starts_with([' ', '\t']) {
        return Some((level, inline(t[level..].trim().trim_end_matches('#').trim())));
    }
    None
}

pub fn parse(source: String, fallback_title: &str, src: &str) -> Parsed {
    let (meta, body) = front_matter(src);
    let get = |k: &str| meta.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone()).filter(|v| !v.is_empty());
    let mut sections: Vec<Section> = vec![Section::default()];
    let mut path: Vec<(usize, String)> = Vec::new();
    let mut paragraph = String::new();
    let mut in_fence = false;
    let mut first_h1 = None;
    let flush = |paragraph: &mut String, sections: &mut Vec<Section>| {
        let p = crate::knowledge::text::squash(paragraph);
        if !p.is_empty() {
            sections.last_mut().expect("a section").paragraphs.push(p);
        }
        paragraph.clear();
    };
    for line in body.lines() {
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            if let Some((level, text)) = heading(line) {
                flush(&mut paragraph, &mut sections);
                if level == 1 && first_h1.is_none() {
                    first_h1 = Some(text.clone());
                }
                path.retain(|(l, _)| *l < level);
                path.push((level, text));
                sections.push(Section { path: path.iter().map(|(_, t)| t.clone()).collect(), paragraphs: vec![] });
                continue;
            }
            let t = line.trim();
            if t.is_empty() || t.chars().all(|c| matches!(c, '-' | '=' | '*' | '_' | '|' | ':' | ' ')) {
                flush(&mut paragraph, &mut sections);
                continue;
            }
        }
        let t = line.trim().trim_start_matches('>').trim();
        let item = t.strip_prefix("- ").or_else(|| t.strip_prefix("* ")).or_else(|| t.strip_prefix("+ "));
        let t = item.unwrap_or(t);
        if !paragraph.is_empty() {
            // List items read as one sentence with semicolons unless they bring their own stops.
            let stop = paragraph.ends_with(['.', ':', '!', '?', ';', ',']);
            paragraph.push_str(if item.is_some() && !stop { "; " } else { " " });
        }
        paragraph.push_str(&inline(t.trim_matches('|').replace(" | ", ", ").as_str()));
    }
    flush(&mut paragraph, &mut sections);
    let title = get("title").or(first_h1).unwrap_or_else(|| fallback_title.to_owned());
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
