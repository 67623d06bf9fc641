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

#[cfg(test)]
mod tests {
    use super::*;

    const SITE: &str = "3f2b6c1e-8d4a-4f7e-9b1a-2c3d4e5f6a7b";

    fn site(uri: &str) -> Option<String> {
        site_in(&uri.parse().unwrap()).map(|s| s.to_string())
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
