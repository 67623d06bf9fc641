use crate::knowledge::import::html::*;
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
// them): a parser that replaces it must read ordinary pages the same. One difference is intended: the
// scanner ran table cells written without space between them together (`ItemPrice`).

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

fn paragraphs(p: &Parsed) -> Vec<String> {
    p.sections.iter().flat_map(|s| s.paragraphs.clone()).collect()
}

#[test]
fn page_chrome_forms_and_hidden_elements_are_dropped() {
    let html = r#"<body><header><a href="/">Bright Smile</a> Call now</header><aside>Related posts</aside>
        <div role="navigation">Menu</div><main><p>Visible text.</p>
        <p hidden>Hidden paragraph.</p><div aria-hidden="true">Decoration</div><span style="display: none">Tracking</span>
        <div hidden="until-found">Found by search.</div><dialog>Cookie consent</dialog>
        <form><label for="e">Your e-mail</label><input id="e"><select><option>Berlin</option></select><button>Send</button>
        <p>We answer within a day.</p></form><noscript>Enable JavaScript</noscript><template><p>Row</p></template>
        <svg><title>Logo</title><text>SVG text</text></svg></main><footer>Imprint</footer></body>"#;
    let p = parse("c.html".into(), "contact", html);
    assert_eq!(paragraphs(&p), ["Visible text.", "Found by search.", "We answer within a day."]);
    assert_eq!(p.title, "contact", "an SVG's title is not the page's");
}

#[test]
fn entities_are_decoded_and_the_first_h1_titles_a_page_without_title() {
    // `&not` is one of the legacy references a browser decodes without its semicolon.
    let html = "<h1>Caf&eacute; &amp; Bar</h1><p>Open&hellip; we&rsquo;re &#x1F600; &#8364;5 &notit; &unknown; AT&T</p>";
    let p = parse("c.html".into(), "c", html);
    assert_eq!(p.title, "Café & Bar");
    assert_eq!(paragraphs(&p), ["Open… we’re 😀 €5 ¬it; &unknown; AT&T"]);
}

#[test]
fn nested_lists_and_tables_keep_their_text_in_order() {
    let html = "<ul><li>Cleaning<ul><li>every six months</li></ul></li><li>Whitening</li></ul>\
        <table><tr><td>Crown<table><tr><td>ceramic</td><td>650</td></tr></table></td></tr></table>";
    let p = parse("c.html".into(), "c", html);
    assert_eq!(paragraphs(&p), ["Cleaning", "every six months", "Whitening", "Crown", "ceramic 650"]);
}

#[test]
fn a_page_gives_a_crawler_its_canonical_url_base_links_and_robots() {
    let html = r#"<head><base href="https://clinic.example/de/"><link rel="Canonical" href="/de/preise?a=1&amp;b=2">
        <meta name="ROBOTS" content="noindex, follow"></head><body><nav><a href="/">Home</a><a href="preise">Preise</a></nav>
        <p><a href="preise">Preise</a> <a href="https://ads.example/" rel="sponsored nofollow">Ad</a> <a>no href</a>
        <map><area href="/karte"></map></p><template><a href="/inert">x</a></template></body>"#;
    let (p, meta) = parse_page("p.html".into(), "p", html);
    assert_eq!(meta.canonical.as_deref(), Some("/de/preise?a=1&b=2"));
    assert_eq!(p.url, None, "a relative canonical is not a citation URL");
    assert_eq!(meta.base.as_deref(), Some("https://clinic.example/de/"));
    assert_eq!(meta.links, ["/", "preise", "/karte"]);
    assert!(meta.noindex && !meta.nofollow && !meta.truncated);
    let (_, none) = parse_page("p.html".into(), "p", r#"<meta name="robots" content="none">"#);
    assert!(none.noindex && none.nofollow);
}

#[test]
fn hostile_markup_is_read_to_the_end_without_overflowing_the_stack() {
    let mb = 1 << 20;
    for (name, html) in [
        ("<a<a<a", "<a".repeat(mb / 2)),
        ("&&&&", "&".repeat(mb)),
        ("<<<<", "<".repeat(mb)),
        ("100k nested divs", "<div>".repeat(100_000) + "deep"),
        ("misnested formatting", (0..50_000).map(|i| format!("<p><b id={i}>x</p>")).collect()),
        ("one tag, 100k attributes", format!("<p{}>after", (0..100_000).map(|i| format!(" a{i}")).collect::<String>())),
    ] {
        // Finishing is the test (benches/parsers.rs has the times): html5ever takes minutes on the last three.
        let p = parse("h.html".into(), "h", &html);
        assert!(p.sections.len() <= 1, "{name}");
    }
    let deep = parse("h.html".into(), "h", &("<div>".repeat(100_000) + "deep"));
    assert_eq!(paragraphs(&deep), ["deep"]);
}

#[test]
fn nesting_beyond_the_memory_bound_is_read_up_to_there() {
    let html = format!("<p>Before.</p>{}deep", "<div>".repeat(MAX_PARSER_MEMORY / 64));
    let (p, meta) = parse_page("h.html".into(), "h", &html);
    assert!(meta.truncated);
    assert_eq!(paragraphs(&p), ["Before."]);
}
