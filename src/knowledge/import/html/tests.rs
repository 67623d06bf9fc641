use super::*;
use crate::knowledge::import::outline;

#[test]
fn keeps_text_title_and_canonical_drops_scripts_and_nav() {
    let html = r#"<!doctype html><html><head><title>Insurance &amp; billing</title>
        <link rel="canonical" href="https://example.com/insurance"><style>p{color:red}</style></head>
        <body><nav><a href="/">Home</a> Menu</nav><h1>Insurance</h1><p>We bill <b>all</b> public insurers.</p>
        <script>var secret = 1;</script><h2>Private</h2><p>Private patients pay&nbsp;first.</p><!-- note --></body></html>"#;
    let p = parse("i.html".into(), "i", html);
    assert_eq!(p.title, "Insurance & billing");
    assert_eq!(p.url.as_deref(), Some("https://example.com/insurance"));
    let all: Vec<String> = p.sections.iter().flat_map(|s| s.paragraphs.clone()).collect();
    assert_eq!(all, vec!["We bill all public insurers.", "Private patients pay first."]);
    assert_eq!(p.sections[1].path, vec!["Insurance", "Private"]);
}

// `ordinary.outline` holds what the hand-written scanner made of these pages (one `=====` line between
// them): a parser that replaces it must read ordinary pages the same.

/// The page of the API tests (`tests/api/knowledge.rs`).
const PARKING_HTML: &str = "<html><head><title>Getting here</title><link rel=\"canonical\" href=\"https://clinic.example/directions\">\
<script>var tracking = 'parking lot';</script></head><body><nav>Home Prices Contact</nav><h1>Getting here</h1>\
<p>Free parking for patients is available in the courtyard behind the building.</p></body></html>";

/// An ordinary page: lists, a table, a line break, a quote, entities, a heading tree.
const IMPLANTS_HTML: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Implants &ndash; Bright Smile Dental</title>
  <link rel="stylesheet" href="/site.css">
  <link rel="canonical" href="https://brightsmile.example/implants">
  <script type="application/ld+json">{"@type": "Dentist"}</script>
</head>
<body>
  <nav class="menu"><ul><li><a href="/">Home</a></li><li><a href="/prices">Prices</a></li></ul></nav>
  <main>
    <h1>Dental implants</h1>
    <p>An implant replaces a missing tooth&nbsp;root. It is made of <strong>titanium</strong> or <em>ceramic</em>.</p>
    <h2>Treatment steps</h2>
    <ol>
      <li>Consultation and X-ray</li>
      <li>Placing the implant
        <ul><li>under local anaesthesia</li><li>in about an hour</li></ul>
      </li>
      <li>Fitting the crown after three months</li>
    </ol>
    <h3>Healing</h3>
    <p>Most patients return to work the next day.<br>Avoid hard food for a week.</p>
    <h2>Costs</h2>
    <table>
      <tr><th>Item</th><th>Price</th></tr>
      <tr><td>Implant</td><td>1,200 &euro;</td></tr>
      <tr><td>Crown</td><td>650 &euro;</td></tr>
    </table>
    <blockquote>Prices &amp; fees follow the GOZ &#8211; ask us for a <a href="/estimate">written estimate</a>.</blockquote>
    <pre>Mon-Fri  8:00-18:00
Sat      9:00-13:00</pre>
  </main>
</body>
</html>"#;

#[test]
fn ordinary_pages_read_as_before() {
    let got: Vec<String> = [PARKING_HTML, IMPLANTS_HTML].into_iter().map(|html| outline(&parse("page.html".into(), "page", html))).collect();
    let expected: Vec<&str> = include_str!("ordinary.outline").split("=====\n").collect();
    assert_eq!(got, expected);
}
