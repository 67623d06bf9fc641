use crate::knowledge::import::markdown::*;
use crate::knowledge::import::outline;

#[test]
fn front_matter_headings_and_inline_markup() {
    let md = "---\ntitle: Prices\nurl: https://example.com/prices\n---\n# Prices\n\nA **check-up** costs [EUR 60](https://x).\n\n## Whitening\n\n- Bleaching: EUR 300\n- ![logo](l.png) Aftercare included\n";
    let p = parse("prices.md".into(), "prices", md);
    assert_eq!(p.title, "Prices");
    assert_eq!(p.url.as_deref(), Some("https://example.com/prices"));
    assert_eq!(p.sections[0].path, Vec::<String>::new());
    assert_eq!(p.sections[0].paragraphs, vec!["A check-up costs EUR 60."]);
    assert_eq!(p.sections[1].path, vec!["Whitening"]);
    assert_eq!(p.sections[1].paragraphs, vec!["Bleaching: EUR 300; Aftercare included"]);
}

// `ordinary.outline` holds what the hand-written scanner made of these documents (one `=====` line
// between them): a parser that replaces it must read ordinary documents the same.

/// Documents of the API tests (`tests/api/knowledge.rs`).
const HOURS_MD: &str = "---\ntitle: Opening hours\nurl: https://clinic.example/hours\n---\n# Opening hours\n\n\
The clinic is open Monday to Friday from 8:00 to 18:00. On Saturdays we are open from 9:00 to 13:00.\n\n\
## Holidays\n\nWe are closed on Sundays and public holidays.\n";
const BIKES_MD: &str = "---\ntitle: Bike repairs\nurl: https://bikes.example/repairs\n---\n# Bike repairs\n\n\
A flat tyre repair costs 15 euros and takes about twenty minutes. We service e-bikes of every brand.\n";

/// An ordinary document with lists (nested, ordered, after a colon), a table, a quote and code.
const AFTERCARE_MD: &str = r#"---
title: Aftercare
url: https://brightsmile.example/aftercare
---
# Aftercare

After a filling, wait **two hours** before eating. See [our prices](https://brightsmile.example/prices) for costs.
A numbing injection wears off within _three_ hours.

## After an extraction

Things to avoid:

- Smoking for 48 hours
- Hot drinks on the first day
- Rinsing hard, which can loosen the clot

What helps:
* Cool the cheek
  * from outside
  * ten minutes at a time
* Sleep with your head raised.

1. Bite on the gauze for 30 minutes.
2. Take the painkiller we gave you.

### Bleeding

Slight bleeding is normal for a day.

## Cleaning tips

| Tool | How often |
|------|-----------|
| Toothbrush | twice a day |
| Floss | once a day |

> Replace your toothbrush every three months.

```text
Use a soft brush.
```

Escaped \*stars\* and `code` stay readable; ![diagram](d.png) images go.

---

Questions? Call +49 30 1234 5678.
"#;

#[test]
fn ordinary_documents_read_as_before() {
    let demo = [
        include_str!("../../../../assets/demo/knowledge/opening-hours.md"),
        include_str!("../../../../assets/demo/knowledge/prices.md"),
        include_str!("../../../../assets/demo/knowledge/insurance.md"),
        include_str!("../../../../assets/demo/knowledge/emergencies.md"),
        include_str!("../../../../assets/demo/knowledge/booking.md"),
    ];
    let expected: Vec<&str> = include_str!("ordinary.outline").split("=====\n").collect();
    let got: Vec<String> = demo.into_iter().chain([HOURS_MD, BIKES_MD, AFTERCARE_MD]).map(|md| outline(&parse("doc.md".into(), "doc", md))).collect();
    assert_eq!(got, expected);
}

fn paragraphs(p: &Parsed) -> Vec<String> {
    p.sections.iter().flat_map(|s| s.paragraphs.clone()).collect()
}

#[test]
fn lists_tables_quotes_and_code_become_paragraphs() {
    let md = "Bring:\n\n- your card\n  - or its number\n- a list of medicines\n\n1) Ring\n2) Wait\n\n\
        - loose one\n\n- loose two\n\n| Day | Hours |\n|---|---|\n| Mon | 8-18 |\n| Sat | |\n\n> Quoted\n>\n> on.\n\n    indented code\n";
    let p = parse("l.md".into(), "l", md);
    assert_eq!(
        paragraphs(&p),
        [
            "Bring:", "your card; or its number; a list of medicines", "1) Ring 2) Wait", "loose one", "loose two", "Day, Hours", "Mon, 8-18 Sat,",
            "Quoted on.", "indented code"
        ]
    );
}

#[test]
fn inline_markup_is_reduced_to_text_and_entities_decoded() {
    let md = "Mail <hello@clinic.example> or see <https://clinic.example>, [the map][m] and ![a](x.png)\
        [*nested* `code`](u) &amp; &copy; 5\\*3 snake_case <b>bold</b>\n\n[m]: https://maps.example\n";
    let p = parse("i.md".into(), "i", md);
    assert_eq!(paragraphs(&p), ["Mail hello@clinic.example or see https://clinic.example, the map and nested code & © 5*3 snake_case bold"]);
}

#[test]
fn setext_headings_and_html_blocks() {
    let md = "Prices\n======\n\nText.\n\nWhitening\n---------\n\n<div class=\"note\">\n<p>Ask &amp; save.</p><script>x()</script>\n</div>\n";
    let p = parse("s.md".into(), "s", md);
    assert_eq!(p.title, "Prices");
    assert_eq!(p.sections[0].paragraphs, ["Text."]);
    assert_eq!(p.sections[1].path, ["Whitening"]);
    assert_eq!(p.sections[1].paragraphs, ["Ask & save."]);
}

#[test]
fn hostile_markdown_is_read_to_the_end_without_overflowing_the_stack() {
    let mb = 1 << 20;
    for (name, md) in [
        ("[[[[", "[".repeat(mb)),
        ("<<<<", "<".repeat(mb)),
        ("[a](", "[a](".repeat(mb / 4)),
        ("100k nested quotes", "> ".repeat(100_000) + "deep"),
        ("100k nested lists", "- ".repeat(100_000) + "deep"),
        ("**_", "**_".repeat(mb / 3)),
    ] {
        // Finishing is the test (benches/parsers.rs has the times).
        let p = parse("h.md".into(), "h", &md);
        assert!(p.sections.len() <= 1, "{name}");
    }
}
