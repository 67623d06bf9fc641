use super::*;
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
