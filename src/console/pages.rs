//! The console's pages: one askama template each (`assets/console/templates/`), compiled with the
//! binary and escaped for HTML by askama. Nothing a visitor or a user wrote is ever marked safe.

use askama::Template;

use super::texts::Texts;

/// Who is signed in, as the page header shows it.
#[derive(Debug)]
pub struct Header<'a> {
    pub email: &'a str,
    pub csrf: &'a str,
}

#[derive(Template)]
#[template(path = "login.html", config = "assets/console/askama.toml")]
pub struct Login<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub error: Option<&'a str>,
    pub email: &'a str,
    pub any_user: bool,
    // #25 oidc
    /// Single sign-on is offered.
    pub sso: bool,
    /// Password sign-in is on (`[console] local_passwords`).
    pub passwords: bool,
}

#[derive(Template)]
#[template(path = "setup.html", config = "assets/console/askama.toml")]
pub struct Setup<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub error: Option<&'a str>,
    pub email: &'a str,
    pub token: &'a str,
}

#[derive(Template)]
#[template(path = "message.html", config = "assets/console/askama.toml")]
pub struct Message<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub title: &'a str,
    pub text: &'a str,
    pub link: &'a str,
    pub link_text: &'a str,
}

/// One row of the sites page.
#[derive(Debug)]
pub struct SiteRow {
    pub id: String,
    pub name: String,
    pub role: &'static str,
    pub questions_7: u64,
    pub questions_30: u64,
    pub resolution_30: String,
    pub leads_30: u64,
    pub thumbs_up_30: u64,
    pub thumbs_down_30: u64,
    /// Questions per day over the last 30 days.
    pub spark: super::charts::Chart,
    pub enabled: bool,
}

#[derive(Template)]
#[template(path = "sites.html", config = "assets/console/askama.toml")]
pub struct Sites<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub sites: Vec<SiteRow>,
}

/// A group of the review queue, as the site page lists it.
#[derive(Debug)]
pub struct GroupRow {
    pub id: i64,
    pub example: String,
    pub count: u64,
    pub last_at: String,
}

/// A thumbs-down rating, as the site page lists it.
#[derive(Debug)]
pub struct DownRow {
    pub question: String,
    pub comment: String,
    pub at: String,
}

/// What `site_nav.html` shows above each of a site's tabbed pages.
#[derive(Debug)]
pub struct SiteNav {
    pub site_id: String,
    pub site_name: String,
    /// Which of the site's tabs this page is.
    pub tab: &'static str,
    /// Whether the user may manage the site (the Audit tab is shown only then).
    pub manage: bool,
}

#[derive(Template)]
#[template(path = "site.html", config = "assets/console/askama.toml")]
pub struct Site<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    /// The site's crumbs, title and tabs (`site_nav.html`).
    pub nav: SiteNav,
    pub groups: Vec<GroupRow>,
    pub thumbs_down: Vec<DownRow>,
}

/// A question of a group.
#[derive(Debug)]
pub struct QuestionRow {
    pub question: String,
    pub lang: String,
    pub at: String,
}

#[derive(Template)]
#[template(path = "group.html", config = "assets/console/askama.toml")]
pub struct Group<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub csrf: &'a str,
    pub site_id: String,
    pub site_name: String,
    pub group_id: i64,
    pub example: String,
    pub count: u64,
    pub last_at: String,
    pub questions: Vec<QuestionRow>,
    pub may_edit: bool,
    pub error: Option<&'a str>,
    pub form_question: String,
    pub form_answer: String,
    pub form_url: String,
}

/// A cited source on the dashboard (its URL only when it is http or https).
#[derive(Debug)]
pub struct SourceRow {
    pub title: String,
    pub url: Option<String>,
    pub citations: u64,
}

/// A curated answer written in the console and the share answered in the 7 days before and after.
#[derive(Debug)]
pub struct EffectRow {
    pub example: String,
    pub at: String,
    pub before: String,
    pub after: String,
}

#[derive(Template)]
#[template(path = "dashboard.html", config = "assets/console/askama.toml")]
pub struct Dashboard<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    /// The site's crumbs, title and tabs (`site_nav.html`).
    pub nav: SiteNav,
    pub days: u32,
    pub periods: Vec<(u32, String)>,
    pub questions: u64,
    pub resolution: String,
    pub leads: u64,
    pub thumbs_up: u64,
    pub thumbs_down: u64,
    pub charts: Vec<super::charts::Chart>,
    /// (day, questions, answered, leads, up, down)
    pub table: Vec<(String, u64, u64, u64, u64, u64)>,
    pub languages: Vec<(String, u64)>,
    pub sources: Vec<SourceRow>,
    pub groups: Vec<GroupRow>,
    pub effects: Vec<EffectRow>,
}

/// A lead in the list.
#[derive(Debug)]
pub struct LeadItem {
    pub id: String,
    pub at: String,
    pub name: String,
    pub email: String,
    pub message: String,
    pub delivery: String,
}

#[derive(Template)]
#[template(path = "leads.html", config = "assets/console/askama.toml")]
pub struct Leads<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    /// The site's crumbs, title and tabs (`site_nav.html`).
    pub nav: SiteNav,
    pub leads: Vec<LeadItem>,
    /// The keyset of the next page (`created_at millis:id`), when there may be one.
    pub next: Option<String>,
}

/// A lead's webhook event as the lead page shows it.
#[derive(Debug)]
pub struct Delivery {
    pub status: String,
    pub attempts: u32,
    pub last_error: String,
    /// (attempt, when, status code, error)
    pub rows: Vec<(u32, String, String, String)>,
    pub replayable: bool,
}

#[derive(Template)]
#[template(path = "lead.html", config = "assets/console/askama.toml")]
pub struct Lead<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub csrf: &'a str,
    pub site_id: String,
    pub site_name: String,
    pub lead_id: String,
    pub at: String,
    pub name: String,
    pub email: String,
    pub message: String,
    pub page_url: String,
    /// The page's address as a link, only when it is http or https.
    pub page_link: Option<String>,
    /// (who, text)
    pub turns: Vec<(String, String)>,
    pub delivery: Option<Delivery>,
}

#[derive(Template)]
#[template(path = "audit.html", config = "assets/console/askama.toml")]
pub struct Audit<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    /// The site's crumbs, title and tabs (`site_nav.html`).
    pub nav: SiteNav,
    /// (when, who, action, detail)
    pub entries: Vec<(String, String, String, String)>,
    pub next: Option<i64>,
}

/// A conversation in the list.
#[derive(Debug)]
pub struct ConversationItem {
    pub id: String,
    pub first: String,
    pub at: String,
    pub turns: u64,
    pub unanswered: u64,
    pub lead: bool,
}

#[derive(Template)]
#[template(path = "conversations.html", config = "assets/console/askama.toml")]
pub struct Conversations<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    /// The site's crumbs, title and tabs (`site_nav.html`).
    pub nav: SiteNav,
    pub periods: Vec<(u32, String)>,
    pub days: u32,
    pub lang: String,
    pub q: String,
    pub unanswered: bool,
    pub with_lead: bool,
    pub rated: bool,
    pub rows: Vec<ConversationItem>,
    pub next: Option<String>,
    /// When the page stopped short of a full one at its bound: the last activity it reached.
    pub searched_to: Option<String>,
    pub export_csv: String,
    pub export_jsonl: String,
}

/// An exchange of a transcript.
#[derive(Debug)]
pub struct ExchangeItem {
    pub question: String,
    pub answer: String,
    pub at: String,
    /// (title, link when http or https)
    pub sources: Vec<(String, Option<String>)>,
    pub outcome: String,
    pub rating: String,
}

#[derive(Template)]
#[template(path = "conversation.html", config = "assets/console/askama.toml")]
pub struct Conversation<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub site_id: String,
    pub site_name: String,
    pub conversation_id: String,
    pub exchanges: Vec<ExchangeItem>,
    /// (lead id, e-mail address)
    pub leads: Vec<(String, String)>,
    /// What was said with a person of the staff (live hand-off), oldest first.
    pub with_person: Vec<InboxTurn>,
}

/// One turn of a transcript as the inbox shows it: who (visitor, assistant or the person's name), the
/// text, when.
#[derive(Debug)]
pub struct InboxTurn {
    pub who: String,
    pub staff: bool,
    pub text: String,
    pub at: String,
}

/// A conversation in the inbox.
#[derive(Debug)]
pub struct InboxCard {
    pub id: String,
    pub requested: String,
    pub wait_until: String,
    /// The holder's display name (held ones).
    pub holder: String,
    /// The signed-in user holds it.
    pub mine: bool,
    pub turns: Vec<InboxTurn>,
}

#[derive(Template)]
#[template(path = "inbox.html", config = "assets/console/askama.toml")]
pub struct Inbox<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub nav: SiteNav,
    pub csrf: &'a str,
    /// Owners and editors act; viewers read.
    pub act: bool,
    pub online: usize,
    pub waiting: Vec<InboxCard>,
    pub active: Vec<InboxCard>,
}

/// The hand-off settings form's values, as strings the way they are typed.
pub struct HandoffForm {
    pub enabled: bool,
    pub hours: String,
    pub closed: String,
    pub timezone: String,
    pub wait: String,
}

#[derive(Template)]
#[template(path = "settings.html", config = "assets/console/askama.toml")]
pub struct Settings<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub nav: SiteNav,
    pub csrf: &'a str,
    pub form: HandoffForm,
    /// What is wrong with the sent form (nothing was saved).
    pub error: Option<String>,
    /// The form was just saved.
    pub saved: bool,
    pub max_wait: u32,
}
