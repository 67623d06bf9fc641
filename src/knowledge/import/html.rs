//! HTML: the visible text of a page, structured by its headings, and what a crawler needs besides
//! (`parse_page`: canonical URL, base, outgoing links, robots directives).
//!
//! The markup is read by lol_html, Cloudflare's streaming HTML rewriter: the standard's tokenizer
//! (raw-text elements, comments, foreign content), in time linear in the input whatever the markup,
//! within a bound on its memory (`MAX_PARSER_MEMORY`). html5ever was measured too (`benches/parsers.rs`): its tree
//! builder takes quadratic time on deep nesting, on misnested formatting elements and on the attribute
//! count of one tag, none of which can be bounded from outside it. lol_html builds no tree: an element
//! ends at its end tag or at an enclosing element's, and end tags the standard lets authors omit
//! (`</p>`, `</li>`) are not inferred. That only matters for an element dropped below: a hidden `<li>`
//! written without its `</li>` also drops the items after it, up to the list's end.
//!
//! Kept: `<title>` (else the first `<h1>`) as the title, `<link rel="canonical">` as the URL, the text by
//! heading; block elements end paragraphs, table cells are set apart by a space. Dropped with their
//! content: scripts, styles, `noscript`, `template`, SVG, iframes; navigation and page chrome (`nav`,
//! `header`, `footer`, `aside`, ARIA roles `navigation`, `banner`, `contentinfo`, `complementary` and
//! `search`); form controls and their labels; closed `dialog`s; hidden elements (`hidden`,
//! `aria-hidden="true"`, an inline `display:none` or `visibility:hidden`).

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

use htmlize::{unescape, unescape_attribute};
use lol_html::html_content::{Element, TextType};
use lol_html::{HtmlRewriter, MemorySettings, Settings, doc_text, element, end_tag};

use crate::knowledge::import::{Parsed, Section};
use crate::knowledge::text::squash;

/// What a crawler needs from a page besides its text. URLs are as written: resolve them against
/// `base` when there is one, else against the page's own URL.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageMeta {
    /// The first `<link rel="canonical" href>`.
    pub canonical: Option<String>,
    /// The first `<base href>`.
    pub base: Option<String>,
    /// The `href` of each `<a>` and `<area>` in document order, navigation included; repeats and
    /// `rel="nofollow"` links left out.
    pub links: Vec<String>,
    /// `<meta name="robots">` says `noindex` (or `none`).
    pub noindex: bool,
    /// `<meta name="robots">` says `nofollow` (or `none`).
    pub nofollow: bool,
    /// The page nests elements deeper than `MAX_PARSER_MEMORY` holds, and was read up to there.
    pub truncated: bool,
}

/// Bound on lol_html's own memory, which is its stack of open elements: about 250,000 of them (at
/// about 130 bytes each), far beyond real pages (browsers flatten the tree past 512), while 20 MiB
/// of hostile nesting would otherwise hold about 1.2 GB.
const MAX_PARSER_MEMORY: usize = 32 << 20;

/// Elements whose content is not text a visitor reads (`header` and `footer` hold the page's chrome).
const DROPPED: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "iframe", "nav", "header", "footer", "aside", "button", "select", "textarea", "label", "datalist",
    "output",
];
/// ARIA roles of navigation and page chrome.
const DROPPED_ROLES: &[&str] = &["navigation", "banner", "contentinfo", "complementary", "search"];
/// Elements that end a paragraph.
const BLOCKS: &[&str] = &[
    "p", "div", "br", "li", "ul", "ol", "tr", "table", "section", "article", "main", "header", "footer", "aside", "nav", "blockquote", "dd", "dt", "dl", "pre",
    "form", "hr", "figure", "figcaption", "address", "body", "details", "summary", "fieldset", "legend", "caption", "hgroup", "center", "menu", "search",
    "dialog",
];

fn is_hidden(el: &Element) -> bool {
    // `hidden="until-found"` content is found by the page's search and shown: it is text a visitor reads.
    let hidden = el.get_attribute("hidden").is_some_and(|v| !v.trim().eq_ignore_ascii_case("until-found"));
    let aria = el.get_attribute("aria-hidden").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    let style = el.get_attribute("style").is_some_and(|s| {
        let s: String = s.chars().filter(|c| !c.is_ascii_whitespace()).collect::<String>().to_ascii_lowercase();
        s.contains("display:none") || s.contains("visibility:hidden")
    });
    hidden || aria || style
}

fn is_dropped(el: &Element, name: &str) -> bool {
    let role = el.get_attribute("role").is_some_and(|r| r.split_ascii_whitespace().any(|r| DROPPED_ROLES.iter().any(|d| r.eq_ignore_ascii_case(d))));
    let closed_dialog = name == "dialog" && !el.has_attribute("open");
    DROPPED.contains(&name) || role || closed_dialog || is_hidden(el)
}

/// What an element's end tag closes.
#[derive(Clone, Copy)]
enum Open {
    Dropped,
    Inert,
    Title,
    Heading,
    Block,
}

/// The state of one page's reading, shared by lol_html's handlers (they run one at a time).
struct Reader {
    sections: Vec<Section>,
    path: Vec<(usize, String)>,
    /// The current paragraph's raw text, entities still escaped (one chunk may end inside one).
    text: String,
    heading: Option<(usize, String)>,
    title: Option<String>,
    title_text: Option<String>,
    first_h1: Option<String>,
    /// Open elements whose content is dropped; `inert` counts `<template>`s, whose links are not links.
    dropped: usize,
    inert: usize,
    meta: PageMeta,
    seen: HashSet<String>,
}

impl Reader {
    fn new() -> Self {
        Reader {
            sections: vec![Section::default()],
            path: vec![],
            text: String::new(),
            heading: None,
            title: None,
            title_text: None,
            first_h1: None,
            dropped: 0,
            inert: 0,
            meta: PageMeta::default(),
            seen: HashSet::new(),
        }
    }

    fn flush(&mut self) {
        let p = squash(&unescape(self.text.as_str()));
        if !p.is_empty() {
            self.sections.last_mut().expect("a section").paragraphs.push(p);
        }
        self.text.clear();
    }

    /// Where text goes now: the heading being read, else the paragraph.
    fn buffer(&mut self) -> &mut String {
        match &mut self.heading {
            Some((_, h)) => h,
            None => &mut self.text,
        }
    }

    /// A paragraph boundary; inside a heading, a space.
    fn boundary(&mut self) {
        if self.heading.is_some() {
            self.buffer().push(' ');
        } else {
            self.flush();
        }
    }

    fn end_heading(&mut self) {
        let Some((level, raw)) = self.heading.take() else { return };
        let h = squash(&unescape(raw.as_str()));
        // An empty heading (an icon, an image) names nothing: the section goes on.
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

    /// Links and head metadata: read in dropped elements too (navigation is where the links are).
    fn collect_meta(&mut self, el: &Element, name: &str) {
        let attr = |n: &str| el.get_attribute(n).map(|v| unescape_attribute(v).trim().to_owned());
        let rel_has = |token: &str| attr("rel").is_some_and(|r| r.split_ascii_whitespace().any(|t| t.eq_ignore_ascii_case(token)));
        match name {
            "a" | "area" if self.inert == 0 && !rel_has("nofollow") => {
                if let Some(href) = attr("href").filter(|h| !h.is_empty())
                    && self.seen.insert(href.clone())
                {
                    self.meta.links.push(href);
                }
            }
            "link" if self.meta.canonical.is_none() && rel_has("canonical") => self.meta.canonical = attr("href").filter(|h| !h.is_empty()),
            "base" if self.meta.base.is_none() => self.meta.base = attr("href").filter(|h| !h.is_empty()),
            "meta" if attr("name").is_some_and(|n| n.eq_ignore_ascii_case("robots")) => {
                for d in attr("content").unwrap_or_default().to_ascii_lowercase().split([',', ' ', '\t', '\n']) {
                    self.meta.noindex |= matches!(d, "noindex" | "none");
                    self.meta.nofollow |= matches!(d, "nofollow" | "none");
                }
            }
            _ => {}
        }
    }

    /// A start tag; returns what its end tag will close, if anything.
    fn start(&mut self, el: &Element) -> Option<Open> {
        let name = el.tag_name();
        self.collect_meta(el, &name);
        if name == "template" {
            self.inert += 1;
            self.dropped += 1;
            return Some(Open::Inert);
        }
        if self.dropped > 0 {
            return None;
        }
        if is_dropped(el, &name) {
            if BLOCKS.contains(&name.as_str()) {
                self.boundary();
            }
            self.dropped += 1;
            return Some(Open::Dropped);
        }
        if name == "title" && self.title.is_none() && self.title_text.is_none() {
            self.title_text = Some(String::new());
            return Some(Open::Title);
        }
        if let [b'h', d @ b'1'..=b'6'] = name.as_bytes()
            && self.heading.is_none()
        {
            self.flush();
            self.heading = Some(((d - b'0') as usize, String::new()));
            return Some(Open::Heading);
        }
        if matches!(name.as_str(), "td" | "th") {
            self.buffer().push(' ');
        }
        if BLOCKS.contains(&name.as_str()) {
            self.boundary();
            return Some(Open::Block);
        }
        None
    }

    fn end(&mut self, open: Open) {
        match open {
            Open::Dropped => self.dropped -= 1,
            Open::Inert => {
                self.inert -= 1;
                self.dropped -= 1;
            }
            Open::Title => {
                let t = self.title_text.take().map(|t| squash(&unescape(t.as_str()))).filter(|t| !t.is_empty());
                self.title = self.title.take().or(t);
            }
            Open::Heading => self.end_heading(),
            Open::Block => self.boundary(),
        }
    }

    fn text(&mut self, chunk: &str, kind: TextType) {
        if self.dropped > 0 {
            return;
        }
        let buffer = match &mut self.title_text {
            Some(t) => t,
            None => self.buffer(),
        };
        match kind {
            TextType::Data | TextType::RCData => buffer.push_str(chunk),
            // Literal text: escaped here because the buffer is unescaped as a whole.
            TextType::PlainText | TextType::CDataSection => buffer.push_str(&chunk.replace('&', "&amp;")),
            // Style sheets, scripts, `xmp`: not text a visitor reads.
            TextType::RawText | TextType::ScriptData => {}
        }
    }
}

/// Reads a page: its text as a `Parsed`, and what a crawler needs from it.
pub fn parse_page(source: String, fallback_title: &str, src: &str) -> (Parsed, PageMeta) {
    let reader = Rc::new(RefCell::new(Reader::new()));
    let (on_element, on_text) = (reader.clone(), reader.clone());
    // Not strict: strict mode gives up on markup whose text type lol_html cannot tell without a tree.
    let settings = Settings::new()
        .with_strict(false)
        .with_memory_settings(MemorySettings::new().with_max_allowed_memory_usage(MAX_PARSER_MEMORY))
        .append_element_content_handler(element!("*", move |el| {
            let open = on_element.borrow_mut().start(el);
            if let Some(open) = open
                && el.can_have_content()
            {
                let reader = on_element.clone();
                el.on_end_tag(end_tag!(move |_| {
                    reader.borrow_mut().end(open);
                    Ok(())
                }))?;
            } else if let Some(open) = open {
                // A void element (`<br>`) or a self-closing foreign one (`<svg/>`) has no content to close.
                on_element.borrow_mut().end(open);
            }
            Ok(())
        }))
        .append_document_content_handler(doc_text!(move |t| {
            on_text.borrow_mut().text(t.as_str(), t.text_type());
            Ok(())
        }));
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    // The handlers never fail, and the whole page is one write (lol_html keeps no input of its own),
    // so the one error to expect is the memory bound, met by nesting: the text read up to it is kept.
    let read = rewriter.write(src.as_bytes()).and_then(|()| rewriter.end());
    let mut r = reader.replace(Reader::new());
    if let Err(e) = read {
        tracing::warn!(source, error = %e, "the HTML reader stopped early");
        r.meta.truncated = true;
    }
    r.end_heading();
    r.flush();
    let title = r.title.take().or(r.first_h1.take()).unwrap_or_else(|| fallback_title.to_owned());
    let mut sections = std::mem::take(&mut r.sections);
    // The page's own H1 is its title, not a section of it.
    for s in &mut sections {
        if s.path.first().is_some_and(|h| *h == title) {
            s.path.remove(0);
        }
    }
    sections.retain(|s| !s.paragraphs.is_empty());
    let url = r.meta.canonical.clone().filter(|u| u.starts_with("http"));
    (Parsed { source, title, url, format: "html", sections }, r.meta)
}

/// Reads a page's text.
pub fn parse(source: String, fallback_title: &str, src: &str) -> Parsed {
    parse_page(source, fallback_title, src).0
}

#[cfg(test)]
mod tests;
