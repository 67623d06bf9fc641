//! URL identity for the crawler: one page, one URL. Fragments and tracking parameters are stripped
//! (they never change what a server sends), the rest of the query is kept in its order; the host is
//! compared with its scheme's effective port, so `https://a/` and `https://a:443/` are one site.

use url::Url;
use wildmatch::WildMatch;

/// Query parameters that only tell analytics where a visitor came from.
const TRACKING: &[&str] = &[
    "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid", "msclkid", "mc_cid", "mc_eid", "yclid", "igshid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok",
    "ref_src",
];

fn is_tracking(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("utm_") || TRACKING.contains(&n.as_str())
}

/// `href` resolved against `base`, if it is an http(s) URL: without its fragment and tracking
/// parameters (and without an empty query left behind).
pub fn resolve(base: &Url, href: &str) -> Option<Url> {
    let url = base.join(href.trim()).ok()?;
    clean(url)
}

/// `url` without its fragment and tracking parameters; `None` unless it is http(s).
pub fn clean(mut url: Url) -> Option<Url> {
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return None;
    }
    url.set_fragment(None);
    if url.query().is_some() {
        let kept: Vec<(String, String)> = url.query_pairs().filter(|(k, _)| !is_tracking(k)).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        if kept.is_empty() {
            url.set_query(None);
        } else {
            url.query_pairs_mut().clear().extend_pairs(kept);
        }
    }
    Some(url)
}

/// Whether `url` is on the same site as `root`: the same host and effective port (http and https of
/// one host count as one site, so an upgrade redirect stays inside).
pub fn same_site(root: &Url, url: &Url) -> bool {
    let port = |u: &Url| match u.port() {
        Some(p) => Some(p),
        None if matches!(u.scheme(), "http" | "https") => None,
        None => u.port_or_known_default(),
    };
    root.host_str().map(str::to_ascii_lowercase) == url.host_str().map(str::to_ascii_lowercase) && port(root) == port(url)
}

/// `--include` and `--exclude` globs (`*` any run of characters, `?` one), matched against a URL's
/// path and query, e.g. `/blog/*` or `*.pdf`.
#[derive(Debug, Clone, Default)]
pub struct Patterns {
    include: Vec<(String, WildMatch)>,
    exclude: Vec<(String, WildMatch)>,
}

impl Patterns {
    pub fn new(include: &[String], exclude: &[String]) -> Patterns {
        let compile = |v: &[String]| v.iter().map(|p| (p.clone(), WildMatch::new(p))).collect();
        Patterns { include: compile(include), exclude: compile(exclude) }
    }

    /// Why `url` is not crawled, if it is not.
    pub fn refuses(&self, url: &Url) -> Option<String> {
        let target = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        if let Some((p, _)) = self.exclude.iter().find(|(_, m)| m.matches(&target)) {
            return Some(format!("excluded by --exclude {p}"));
        }
        if !self.include.is_empty() && !self.include.iter().any(|(_, m)| m.matches(&target)) {
            return Some("matches no --include pattern".to_owned());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fragments_and_tracking_parameters_are_not_part_of_a_page() {
        let base = Url::parse("https://example.com/docs/").unwrap();
        let r = |h: &str| resolve(&base, h).map(String::from);
        assert_eq!(r("a?utm_source=x&utm_medium=y#top").as_deref(), Some("https://example.com/docs/a"));
        assert_eq!(r("/b?id=3&gclid=z&x=1").as_deref(), Some("https://example.com/b?id=3&x=1"));
        assert_eq!(r("mailto:a@example.com"), None);
        assert_eq!(r("javascript:void(0)"), None);
        assert_eq!(r("#only-a-fragment").as_deref(), Some("https://example.com/docs/"));
    }

    #[test]
    fn one_site_is_one_host_and_port() {
        let root = Url::parse("https://example.com/").unwrap();
        assert!(same_site(&root, &Url::parse("http://EXAMPLE.com/x").unwrap()));
        assert!(same_site(&root, &Url::parse("https://example.com:443/x").unwrap()));
        assert!(!same_site(&root, &Url::parse("https://www.example.com/").unwrap()));
        assert!(!same_site(&root, &Url::parse("https://example.com:8443/").unwrap()));
    }

    #[test]
    fn patterns_match_the_path_and_query() {
        let p = Patterns::new(&["/docs/*".into()], &["*/draft/*".into()]);
        let u = |s: &str| Url::parse(&format!("https://e.com{s}")).unwrap();
        assert_eq!(p.refuses(&u("/docs/a")), None);
        assert_eq!(p.refuses(&u("/docs/draft/a")).as_deref(), Some("excluded by --exclude */draft/*"));
        assert_eq!(p.refuses(&u("/blog/a")).as_deref(), Some("matches no --include pattern"));
    }
}
