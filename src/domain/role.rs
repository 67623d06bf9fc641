//! What a console user may do on one site. An admin may do everything on every site; the others hold a
//! role per site: an owner everything on it, an editor its knowledge and curated answers and the exports
//! of its leads and transcripts, a viewer only reads, one page at a time. One rule, checked on the server
//! for the site in every request's URL.

use std::fmt;

use super::{Invalid, invalid};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SiteRole {
    Viewer,
    Editor,
    Owner,
}

impl SiteRole {
    pub fn parse(s: &str) -> Result<SiteRole, Invalid> {
        match s {
            "owner" => Ok(SiteRole::Owner),
            "editor" => Ok(SiteRole::Editor),
            "viewer" => Ok(SiteRole::Viewer),
            other => Err(invalid(format!("`{other}` is not a role: owner, editor or viewer"))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SiteRole::Owner => "owner",
            SiteRole::Editor => "editor",
            SiteRole::Viewer => "viewer",
        }
    }

    /// Knowledge and curated answers: editors and owners.
    pub fn may_edit(self) -> bool {
        self >= SiteRole::Editor
    }

    /// Exports of the site's personal data (leads, conversation transcripts): editors and owners. A
    /// viewer reads the lists and the pages one at a time, but takes no copy of everyone's data away.
    pub fn may_export(self) -> bool {
        self >= SiteRole::Editor
    }

    /// Settings, users of the site, webhook replays, the audit log: owners.
    pub fn may_manage(self) -> bool {
        self == SiteRole::Owner
    }
}

impl fmt::Display for SiteRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_order_by_what_they_allow() {
        assert!(SiteRole::Owner.may_manage() && SiteRole::Owner.may_edit());
        assert!(SiteRole::Editor.may_edit() && !SiteRole::Editor.may_manage());
        assert!(!SiteRole::Viewer.may_edit() && !SiteRole::Viewer.may_manage());
        assert!(SiteRole::Owner.may_export() && SiteRole::Editor.may_export() && !SiteRole::Viewer.may_export());
        for r in [SiteRole::Owner, SiteRole::Editor, SiteRole::Viewer] {
            assert_eq!(SiteRole::parse(r.as_str()).unwrap(), r);
        }
        assert!(SiteRole::parse("admin").is_err());
    }
}
