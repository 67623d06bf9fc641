//! What each e-mail says: a plain-text part and an HTML part from askama templates in `assets/email/`
//! (the HTML ones escape every value; nothing a visitor wrote is ever marked safe), and a subject with
//! CR, LF and other control characters taken out of anything a visitor wrote. lettre writes the headers
//! from typed values (and encodes non-ASCII), so no value can start a header of its own.

use askama::Template;
use lettre::Message;
use lettre::message::{Mailbox, MultiPart};

use super::SetupLink;
use super::digest::Digest;
use crate::domain::Timestamp;
use crate::store::leads::Lead;

/// Who sends, to whom, and under which Message-ID.
#[derive(Debug, Clone)]
pub struct Envelope<'a> {
    pub from: &'a Mailbox,
    pub to: &'a str,
    /// `<msg_id@domain>`: the queue row's id, so a message sent again is the same message.
    pub message_id: String,
}

#[derive(Debug, thiserror::Error)]
pub enum MessageError {
    #[error("cannot render the e-mail: {0}")]
    Render(#[from] askama::Error),
    #[error("cannot build the e-mail: {0}")]
    Build(String),
}

/// The text of a visitor's value for a subject line: control characters (CR and LF among them) become
/// spaces, runs of spaces one, at most `max` characters.
pub fn subject_safe(s: &str, max: usize) -> String {
    let cleaned: String = s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    let joined = words.join(" ");
    if joined.chars().count() <= max { joined } else { format!("{}…", joined.chars().take(max.saturating_sub(1)).collect::<String>()) }
}

/// A time as the e-mails show it: `2026-11-26 14:05 UTC`.
pub fn when(t: Timestamp) -> String {
    chrono::DateTime::from_timestamp_millis(t.as_millis()).map(|d| d.format("%Y-%m-%d %H:%M UTC").to_string()).unwrap_or_default()
}

fn day(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms).map(|d| d.format("%Y-%m-%d").to_string()).unwrap_or_default()
}

fn build(env: &Envelope<'_>, subject: String, text: String, html: String) -> Result<Message, MessageError> {
    let to: Mailbox = env.to.parse().map_err(|e| MessageError::Build(format!("recipient: {e}")))?;
    Message::builder()
        .from(env.from.clone())
        .to(to)
        .subject(subject)
        .message_id(Some(env.message_id.clone()))
        .multipart(MultiPart::alternative_plain_html(text, html))
        .map_err(|e| MessageError::Build(e.to_string()))
}

#[derive(Template)]
#[template(path = "setup_link.txt", config = "assets/email/askama.toml")]
struct SetupText<'a> {
    link: &'a str,
    expires: String,
    reset: bool,
}

#[derive(Template)]
#[template(path = "setup_link.html", config = "assets/email/askama.toml")]
struct SetupHtml<'a> {
    subject: &'a str,
    link: &'a str,
    expires: String,
    reset: bool,
}

pub fn setup_link(env: &Envelope<'_>, p: &SetupLink) -> Result<Message, MessageError> {
    let subject = if p.reset { "Your new sitebot console link" } else { "Your sitebot console account" };
    let expires = when(Timestamp::from_millis(p.expires_at));
    let text = SetupText { link: &p.link, expires: expires.clone(), reset: p.reset }.render()?;
    let html = SetupHtml { subject, link: &p.link, expires, reset: p.reset }.render()?;
    build(env, subject.to_owned(), text, html)
}

#[derive(Template)]
#[template(path = "lead.txt", config = "assets/email/askama.toml")]
struct LeadText<'a> {
    site: &'a str,
    name: &'a str,
    email: &'a str,
    page: &'a str,
    at: String,
    message: &'a str,
    link: &'a str,
}

#[derive(Template)]
#[template(path = "lead.html", config = "assets/email/askama.toml")]
struct LeadHtml<'a> {
    subject: &'a str,
    site: &'a str,
    name: &'a str,
    email: &'a str,
    page: &'a str,
    at: String,
    message: &'a str,
    link: &'a str,
}

/// The e-mail to an owner about a new lead of `site` (its name), linking to the lead in the console.
pub fn lead(env: &Envelope<'_>, site: &str, lead: &Lead, base: &str) -> Result<Message, MessageError> {
    let name = lead.name.as_deref().unwrap_or("-");
    let subject = format!("New lead on {}: {}", subject_safe(site, 60), subject_safe(lead.name.as_deref().unwrap_or(&lead.email), 80));
    let link = format!("{base}/console/sites/{}/leads/{}", lead.site_id, lead.lead_id);
    let (page, message, at) = (lead.page_url.as_deref().unwrap_or("-"), lead.message.as_deref().unwrap_or("-"), when(lead.created_at));
    let text = LeadText { site, name, email: &lead.email, page, at: at.clone(), message, link: &link }.render()?;
    let html = LeadHtml { subject: &subject, site, name, email: &lead.email, page, at, message, link: &link }.render()?;
    build(env, subject, text, html)
}

/// One line of the digest's groups, with its link.
struct GroupLine<'a> {
    count: u64,
    example: &'a str,
    link: String,
}

struct LeadLine<'a> {
    name: &'a str,
    email: &'a str,
    at: String,
}

#[derive(Template)]
#[template(path = "digest.txt", config = "assets/email/askama.toml")]
struct DigestText<'a> {
    site: &'a str,
    from: String,
    to: String,
    questions: u64,
    answered: u64,
    resolution: String,
    leads: u64,
    groups: &'a [GroupLine<'a>],
    queue: &'a str,
    recent_leads: &'a [LeadLine<'a>],
    /// More leads came than are listed.
    more_leads: bool,
    account: &'a str,
}

#[derive(Template)]
#[template(path = "digest.html", config = "assets/email/askama.toml")]
struct DigestHtml<'a> {
    subject: &'a str,
    site: &'a str,
    from: String,
    to: String,
    questions: u64,
    answered: u64,
    resolution: String,
    leads: u64,
    groups: &'a [GroupLine<'a>],
    queue: &'a str,
    recent_leads: &'a [LeadLine<'a>],
    /// More leads came than are listed.
    more_leads: bool,
    account: &'a str,
}

/// The weekly digest of one site.
pub fn digest(env: &Envelope<'_>, d: &Digest, base: &str) -> Result<Message, MessageError> {
    let subject = format!("{}: your week with sitebot", subject_safe(&d.site_name, 80));
    let groups: Vec<GroupLine<'_>> = d
        .groups
        .iter()
        .map(|g| GroupLine { count: g.count, example: &g.example, link: format!("{base}/console/sites/{}/review/{}", d.site_id, g.id) })
        .collect();
    let recent: Vec<LeadLine<'_>> =
        d.recent_leads.iter().map(|l| LeadLine { name: l.name.as_deref().unwrap_or("-"), email: &l.email, at: when(Timestamp::from_millis(l.at)) }).collect();
    let queue = format!("{base}/console/sites/{}", d.site_id);
    // The account page has no site in its path: the link names it for a balancer (#27 scale-out).
    let account = super::console_link(base, "/console/account", d.site_id.parse().ok());
    let resolution = match d.questions {
        0 => "-".to_owned(),
        q => format!("{} %", (d.answered * 100 + q / 2) / q),
    };
    // The week is [from, to): the last day shown is the day before `to`.
    let (from, to) = (day(d.from), day(d.to - 1));
    let text = DigestText {
        site: &d.site_name,
        from: from.clone(),
        to: to.clone(),
        questions: d.questions,
        answered: d.answered,
        resolution: resolution.clone(),
        leads: d.leads,
        groups: &groups,
        queue: &queue,
        recent_leads: &recent,
        more_leads: d.leads > recent.len() as u64,
        account: &account,
    }
    .render()?;
    let html = DigestHtml {
        subject: &subject,
        site: &d.site_name,
        from,
        to,
        questions: d.questions,
        answered: d.answered,
        resolution,
        leads: d.leads,
        groups: &groups,
        queue: &queue,
        recent_leads: &recent,
        more_leads: d.leads > recent.len() as u64,
        account: &account,
    }
    .render()?;
    build(env, subject, text, html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_visitor_cannot_start_a_header_in_a_subject() {
        assert_eq!(subject_safe("Ada\r\nBcc: all@example.com", 80), "Ada Bcc: all@example.com");
        assert_eq!(subject_safe("  a\tb\u{7}c  ", 80), "a b c");
        assert_eq!(subject_safe("abcdef", 4), "abc…");
    }

    #[test]
    fn visitor_text_is_escaped_in_the_html_part_and_kept_in_the_text_part() {
        let from: Mailbox = "Bot <bot@example.com>".parse().unwrap();
        let env = Envelope { from: &from, to: "owner@example.com", message_id: "<x@example.com>".into() };
        let lead = Lead {
            lead_id: "lead_1".into(),
            site_id: crate::domain::SiteId::parse("3f2b6c1e-8d4a-4f7e-9b1a-2c3d4e5f6a7b").unwrap(),
            name: Some("<script>alert(1)</script>\r\nBcc: x@example.com".into()),
            email: "v@example.com".into(),
            message: Some("<img src=x onerror=alert(2)>".into()),
            page_url: None,
            created_at: Timestamp::from_millis(0),
            conversation_id: None,
            transcript: None,
        };
        let m = lead_parts(&env, &lead);
        // askama writes `<` as `&#60;` (older releases `&lt;`): either way, text.
        let escaped = m.html.contains("&#60;script&#62;") || m.html.contains("&lt;script&gt;");
        assert!(escaped && !m.html.contains("<script>") && !m.html.contains("<img"), "{}", m.html);
        assert!(m.text.contains("<img src=x onerror=alert(2)>"));
        let raw = String::from_utf8(super::lead(&env, "Clinic", &lead, "https://bot.example").unwrap().formatted()).unwrap();
        // No header line of the visitor's making (the body may quote the name as it was written).
        let headers = raw.split("\r\n\r\n").next().unwrap();
        assert!(!headers.contains("\r\nBcc:") && headers.contains("Bcc: x@example.com"), "{raw}");
    }

    struct Parts {
        text: String,
        html: String,
    }

    fn lead_parts(_env: &Envelope<'_>, lead: &Lead) -> Parts {
        let at = when(lead.created_at);
        let (name, message) = (lead.name.as_deref().unwrap_or("-"), lead.message.as_deref().unwrap_or("-"));
        let text = LeadText { site: "Clinic", name, email: &lead.email, page: "-", at: at.clone(), message, link: "l" }.render().unwrap();
        let html = LeadHtml { subject: "s", site: "Clinic", name, email: &lead.email, page: "-", at, message, link: "l" }.render().unwrap();
        Parts { text, html }
    }
}
