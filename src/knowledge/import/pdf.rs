//! PDF: the text layer, read through lopdf within bounds, so that a small hostile file (a
//! decompression bomb, thousands of pages, huge fonts) cannot take unbounded memory or time.

/// Each stream decompresses to at most this while the file loads (lopdf's default is 256 MiB).
const STREAM_BYTES: usize = 32 << 20;
/// The pages read: the first 1,000.
const PAGES: usize = 1_000;
/// A page whose content, or one of its fonts' encodings, decompresses to more is passed over.
const PAGE_BYTES: usize = 4 << 20;
/// Reading stops once the pages' decompressed content comes to this...
const CONTENT_BYTES: usize = 64 << 20;
/// ...or their text to this.
const TEXT_BYTES: usize = 16 << 20;

/// The text of the pages within the bounds; parts that cannot be read are passed over, and the
/// first such error is the reason when no text is left.
pub(super) fn text(bytes: &[u8]) -> Result<String, String> {
    let options = lopdf::LoadOptions { max_decompressed_size: Some(STREAM_BYTES), ..Default::default() };
    let doc = lopdf::Document::load_mem_with_options(bytes, options).map_err(|e| format!("not a readable PDF: {e}"))?;
    let pages = doc.get_pages();
    let (mut text, mut content, mut first_error) = (String::new(), 0, None);
    for (&number, &id) in pages.iter().take(PAGES) {
        // The content is decompressed once more to count it against the whole file's budget.
        let size = match doc.get_page_content_with_limit(id, PAGE_BYTES.min(CONTENT_BYTES - content)) {
            Ok(c) => c.len(),
            Err(e) => {
                first_error.get_or_insert(e.to_string());
                if CONTENT_BYTES - content < PAGE_BYTES {
                    break;
                }
                continue;
            }
        };
        content += size;
        for chunk in doc.extract_text_chunks_with_limit(&[number], PAGE_BYTES) {
            match chunk {
                Ok(t) => text.push_str(&t),
                Err(e) => _ = first_error.get_or_insert(e.to_string()),
            }
        }
        if text.len() >= TEXT_BYTES {
            break;
        }
    }
    if pages.len() > PAGES {
        tracing::warn!(pages = pages.len(), read = PAGES, "a PDF was read up to its page bound");
    }
    if text.trim().is_empty() {
        return Err(match first_error {
            Some(e) => format!("cannot extract the PDF's text: {e}"),
            None => "the PDF has no text layer (scanned images are not read)".into(),
        });
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use crate::knowledge::import::pdf::*;
    use crate::knowledge::import::{Format, Input, parse};

    #[test]
    fn a_corrupt_pdf_is_a_reasoned_failure() {
        let input = Input { name: "broken.pdf".into(), format: Format::Pdf, bytes: b"%PDF-1.4 this is not really a pdf".to_vec() };
        let err = parse(&input).unwrap_err();
        assert!(err.contains("PDF"), "{err}");
    }

    /// A PDF with one page per text, each page's text layer saying it (lopdf's own writer).
    fn pdf_with_pages(texts: &[&str]) -> Vec<u8> {
        use lopdf::content::{Content, Operation};
        use lopdf::{Document, Object, Stream, dictionary};
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font_id = doc.add_object(dictionary! {"Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica"});
        let resources_id = doc.add_object(dictionary! {"Font" => dictionary! {"F1" => font_id}});
        let mut kids: Vec<Object> = vec![];
        for text in texts {
            let content = Content {
                operations: vec![
                    Operation::new("BT", vec![]),
                    Operation::new("Tf", vec!["F1".into(), 12.into()]),
                    Operation::new("Td", vec![72.into(), 700.into()]),
                    Operation::new("Tj", vec![Object::string_literal(*text)]),
                    Operation::new("ET", vec![]),
                ],
            };
            let content_id = doc.add_object(Stream::new(dictionary! {}, content.encode().unwrap()));
            let page = dictionary! {"Type" => "Page", "Parent" => pages_id, "Contents" => content_id, "Resources" => resources_id, "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()]};
            kids.push(doc.add_object(page).into());
        }
        let count = kids.len() as i64;
        doc.objects.insert(pages_id, Object::Dictionary(dictionary! {"Type" => "Pages", "Kids" => kids, "Count" => count}));
        let catalog_id = doc.add_object(dictionary! {"Type" => "Catalog", "Pages" => pages_id});
        doc.trailer.set("Root", catalog_id);
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    #[test]
    fn a_page_over_the_bound_is_passed_over_and_the_others_read() {
        let huge = "x".repeat(PAGE_BYTES + 1);
        let text = text(&pdf_with_pages(&["First page.", &huge, "Third page."])).unwrap();
        assert!(text.contains("First page.") && text.contains("Third page."), "{}", &text[..text.len().min(200)]);
        assert!(!text.contains("xxxx"));
    }

    #[test]
    fn a_pdf_text_layer_is_imported() {
        let input = Input { name: "leaflet.pdf".into(), format: Format::Pdf, bytes: pdf_with_pages(&["Root canal treatment takes about ninety minutes."]) };
        let docs = parse(&input).unwrap();
        let doc = docs[0].as_ref().unwrap();
        assert_eq!(doc.format, "pdf");
        let text: String = doc.sections.iter().flat_map(|s| s.paragraphs.clone()).collect();
        assert!(text.contains("Root canal treatment takes about ninety minutes."), "{text}");
    }
}
