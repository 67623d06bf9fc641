//! The site a console request is on behalf of, for a balancer in front of several nodes (#27 scale-out;
//! `assets/haproxy.cfg`). A page of a site names it in its path (`/console/sites/{site}/...`); a page that
//! starts a sign-in for a site (a setup link, the sign-in page, single sign-on's start, an e-mailed link
//! to the account page) names it in `?site=ID` (`email::console_link`). The node needs neither: it keeps
//! the site on the sign-in's redirects, links and forms, so that a browser the balancer has never seen
//! reaches the site's node at every step until the balancer's cookie does that. A value that is not a
//! site id is dropped, never echoed.

use poem::Request;
use poem::http::Uri;

use crate::domain::SiteId;

/// The site in the request's path, else in its `site` query parameter, when it is a site id.
pub fn site_of(req: &Request) -> Option<SiteId> {
    // The URI as sent: inside the console's routes the path has lost its `/console` prefix.
    site_in(req.original_uri())
}

fn site_in(uri: &Uri) -> Option<SiteId> {
    let in_path = uri.path().strip_prefix("/console/sites/").and_then(|rest| rest.split('/').next());
    match in_path {
        Some(raw) => raw.parse().ok(),
        None => site_param(uri.query().unwrap_or("")),
    }
}

/// The `site` parameter of a query string, when it is a site id.
fn site_param(query: &str) -> Option<SiteId> {
    url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "site").and_then(|(_, v)| v.parse().ok())
}

/// `path` with `?site=ID` when there is a site: the sign-in page and its forms.
pub fn with_site(path: &str, site: Option<SiteId>) -> String {
    crate::email::console_link("", path, site)
}

/// Where a sign-in lands: the page it was for, else the site list.
pub fn landing(next: Option<&str>) -> &str {
    next.unwrap_or("/console/sites")
}

/// The longest page address a sign-in returns to; a longer one lands on the site list.
const MAX_NEXT: usize = 1024;

/// Where a sign-in returns to: the request's `next` parameter, when it is a console page of this server.
pub fn next_of(req: &Request) -> Option<String> {
    let query = req.original_uri().query().unwrap_or("");
    url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == "next").and_then(|(_, v)| safe_next(&v).map(str::to_owned))
}

/// `next` when it is a path on this server under `/console/` and not a page that signs in: never another
/// host (`//host`, a scheme, a backslash that browsers read as a slash), never a control character.
pub fn safe_next(next: &str) -> Option<&str> {
    let rest = next.strip_prefix("/console/")?;
    let signs_in = ["login", "oidc/", "setup/", "logout"].iter().any(|p| rest.starts_with(p));
    let plain = next.len() <= MAX_NEXT && !next.contains(['\\', '#']) && next.chars().all(|c| c.is_ascii_graphic());
    (plain && !rest.starts_with('/') && !signs_in).then_some(next)
}

/// The page a request without a session returns to after signing in: a page it asked for (`GET`).
pub fn return_to(req: &Request) -> Option<String> {
    if req.method() != poem::http::Method::GET {
        return None;
    }
    let uri = req.original_uri();
    let path = match uri.query() {
        Some(q) => format!("{}?{q}", uri.path()),
        None => uri.path().to_owned(),
    };
    // The home and the site list are where a sign-in lands anyway.
    safe_next(&path).filter(|p| !["/console/", "/console/sites"].contains(p) && !p.starts_with("/console/?")).map(str::to_owned)
}

/// `path` for the site, with `next` (URL-encoded) when a sign-in should return there.
pub fn sign_in_link(path: &str, site: Option<SiteId>, next: Option<&str>) -> String {
    let base = with_site(path, site);
    match next {
        Some(n) => {
            let joiner = if base.contains('?') { '&' } else { '?' };
            format!("{base}{joiner}next={}", url::form_urlencoded::byte_serialize(n.as_bytes()).collect::<String>())
        }
        None => base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SITE: &str = "3f2b6c1e-8d4a-4f7e-9b1a-2c3d4e5f6a7b";

    fn site(uri: &str) -> Option<String> {
        site_in(&uri.parse().unwrap()).map(|s| s.to_string())
    }

    #[test]
    fn a_sign_in_returns_only_to_a_console_page_of_this_server() {
        for good in ["/console/sites", "/console/sites/x/leads/7?tab=1", "/console/account"] {
            assert_eq!(safe_next(good), Some(good));
        }
        for bad in [
            "//evil.example/console/", "/console//evil.example", "https://evil.example/console/sites", "/console/\\evil.example", "/elsewhere",
            "/console/login?site=x", "/console/oidc/start", "/console/setup/abc", "/console/sites\r\nSet-Cookie: x=y", "/console/sites#x",
            "/console/caf\u{e9}", "",
        ] {
            assert_eq!(safe_next(bad), None, "{bad:?}");
        }
        assert_eq!(safe_next(&format!("/console/{}", "a".repeat(MAX_NEXT))), None);
        assert_eq!(
            sign_in_link("/console/login", Some(SITE.parse().unwrap()), Some("/console/sites/a/leads/1?x=1&y=2")),
            format!("/console/login?site={SITE}&next=%2Fconsole%2Fsites%2Fa%2Fleads%2F1%3Fx%3D1%26y%3D2")
        );
        assert_eq!(sign_in_link("/console/login", None, None), "/console/login");
    }

    #[test]
    fn the_site_comes_from_the_path_else_the_parameter_and_only_as_a_site_id() {
        assert_eq!(site(&format!("/console/sites/{SITE}/leads")).as_deref(), Some(SITE));
        assert_eq!(site(&format!("/console/sites/{SITE}")).as_deref(), Some(SITE));
        assert_eq!(site(&format!("/console/login?site={}", SITE.to_uppercase())).as_deref(), Some(SITE), "in canonical form");
        assert_eq!(site(&format!("/console/setup/tok?lang=de&site={SITE}")).as_deref(), Some(SITE));
        assert_eq!(site("/console/login?site=%22%3E%3Cscript%3E"), None);
        assert_eq!(site(&format!("/console/login?site={SITE}x")), None);
        assert_eq!(site("/console/login"), None);
        // A page of a site with a malformed id names none, whatever the query says.
        assert_eq!(site(&format!("/console/sites/nope?site={SITE}")), None);
    }

    #[test]
    fn a_path_carries_the_site_as_a_parameter() {
        let id: SiteId = SITE.parse().unwrap();
        assert_eq!(with_site("/console/login", Some(id)), format!("/console/login?site={SITE}"));
        assert_eq!(with_site("/console/login", None), "/console/login");
        assert_eq!(crate::email::console_link("https://c.example", "/console/setup/t", Some(id)), format!("https://c.example/console/setup/t?site={SITE}"));
    }
}
