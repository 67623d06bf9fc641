//! Sitemaps (sitemaps.org 0.9): a `<urlset>` lists pages, a `<sitemapindex>` lists further sitemaps.
//! Read with quick-xml (a streaming XML reader: linear time, no entity expansion beyond the five
//! predefined ones and character references); a gzip body (`.xml.gz`, or the gzip magic) is inflated
//! by flate2 no further than the page size limit.

use std::io::Read;

use quick_xml::Reader;
use quick_xml::events::Event;

/// What one sitemap file lists.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Sitemap {
    pub pages: Vec<String>,
    pub sitemaps: Vec<String>,
}

/// Inflates `body` if it is gzip, reading at most `max` bytes of the result.
pub fn inflate(body: Vec<u8>, max: u64) -> Result<Vec<u8>, String> {
    if !body.starts_with(&[0x1f, 0x8b]) {
        return Ok(body);
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(body.as_slice()).take(max + 1).read_to_end(&mut out).map_err(|e| format!("bad gzip: {e}"))?;
    if out.len() as u64 > max {
        return Err(format!("the sitemap inflates to more than crawl.max_page_bytes ({max})"));
    }
    Ok(out)
}

/// The `<loc>` of each `<url>` and `<sitemap>`, in order.
pub fn parse(xml: &[u8]) -> Result<Sitemap, String> {
    let text = String::from_utf8_lossy(xml);
    let mut reader = Reader::from_str(&text);
    let mut out = Sitemap::default();
    // The element whose <loc> is being read: url or sitemap.
    let mut parent: Option<bool> = None;
    let mut loc: Option<String> = None;
    loop {
        match reader.read_event().map_err(|e| format!("not a sitemap: {e}"))? {
            Event::Start(e) => match e.local_name().as_ref() {
                "url" => parent = Some(false),
                "sitemap" => parent = Some(true),
                "loc" if parent.is_some() => loc = Some(String::new()),
                _ => {}
            },
            Event::Text(t) => {
                if let Some(l) = &mut loc {
                    l.push_str(&t.xml10_content());
                }
            }
            Event::CData(t) => {
                if let Some(l) = &mut loc {
                    l.push_str(&t);
                }
            }
            Event::GeneralRef(r) => {
                if let Some(l) = &mut loc {
                    l.extend(crate::knowledge::text::xml_reference(&r));
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                "loc" => {
                    if let (Some(l), Some(is_index)) = (loc.take(), parent) {
                        let l = l.trim().to_owned();
                        if !l.is_empty() {
                            if is_index { out.sitemaps.push(l) } else { out.pages.push(l) }
                        }
                    }
                }
                "url" | "sitemap" => parent = None,
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urlsets_and_indexes_are_read_with_their_entities() {
        let set = br#"<?xml version="1.0" encoding="UTF-8"?>
            <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
              <url><loc> https://e.com/a?x=1&amp;y=2 </loc><lastmod>2024-01-01</lastmod></url>
              <url><loc><![CDATA[https://e.com/b]]></loc></url>
            </urlset>"#;
        assert_eq!(parse(set).unwrap(), Sitemap { pages: vec!["https://e.com/a?x=1&y=2".into(), "https://e.com/b".into()], sitemaps: vec![] });
        let index =
            br#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://e.com/s1.xml.gz</loc></sitemap></sitemapindex>"#;
        assert_eq!(parse(index).unwrap().sitemaps, ["https://e.com/s1.xml.gz"]);
    }

    #[test]
    fn gzip_is_inflated_within_the_bound() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&[b'x'; 1000]).unwrap();
        let body = gz.finish().unwrap();
        assert_eq!(inflate(body.clone(), 1000).unwrap().len(), 1000);
        assert!(inflate(body, 999).unwrap_err().contains("more than crawl.max_page_bytes"));
        assert_eq!(inflate(b"<urlset/>".to_vec(), 5).unwrap(), b"<urlset/>");
    }
}
