//! The console's pages: one askama template each (`assets/console/templates/`), compiled with the
//! binary and escaped for HTML by askama. Nothing a visitor or a user wrote is ever marked safe.

use askama::Template;

use super::texts::Texts;
use crate::domain::SiteId;

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
    /// The site the sign-in is for (`?site=`), kept on the form and the single sign-on link (#27).
    pub site: Option<SiteId>,
    /// The page the sign-in returns to (`?next=`, checked by `routing::safe_next`), kept the same way.
    pub next: Option<String>,
}

impl Login<'_> {
    /// The password form's action: the sign-in page for the site, returning to `next`.
    pub fn action(&self) -> String {
        super::routing::sign_in_link("/console/login", self.site, self.next.as_deref())
    }

    /// The single sign-on button's link, with the same site and page to return to.
    pub fn sso_href(&self) -> String {
        super::routing::sign_in_link("/console/oidc/start", self.site, self.next.as_deref())
    }
}

#[derive(Template)]
#[template(path = "setup.html", config = "assets/console/askama.toml")]
pub struct Setup<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub error: Option<&'a str>,
    pub email: &'a str,
    pub token: &'a str,
    /// The site the link was made for (`?site=`), kept on the form (#27).
    pub site: Option<SiteId>,
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
    /// Whether the user may export the site's personal data (leads, transcripts): the lists offer
    /// their exports only then.
    pub export: bool,
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
    /// #25 settings: the site, webhook, credentials and disable-or-delete sections.
    pub site: SiteSections,
}

// #25 settings: the site's settings sections beside live hand-off, and the site's users.

/// The site form (name, default language, currency, answer mode, tier), as typed.
#[derive(Debug)]
pub struct GeneralForm {
    pub name: String,
    pub lang: String,
    pub currency: String,
    pub answers: String,
    pub tier: String,
}

/// The webhook form: its URL and each subscribable event with whether it is chosen.
#[derive(Debug)]
pub struct WebhookForm {
    pub url: String,
    pub events: Vec<(&'static str, bool)>,
}

/// What one POST shows once and never again: a new secret or token, or a test event's answer.
#[derive(Debug)]
pub struct Notice {
    pub title: &'static str,
    /// A new secret or token, to copy now.
    pub secret: Option<String>,
    /// (label, value)
    pub facts: Vec<(&'static str, String)>,
}

/// The settings page's sections beyond live hand-off (#25).
#[derive(Debug)]
pub struct SiteSections {
    pub general: GeneralForm,
    pub general_error: Option<String>,
    pub webhook: WebhookForm,
    pub webhook_error: Option<String>,
    /// The endpoint is disabled (a 410, or failing too long): saving the URL again re-enables it.
    pub webhook_disabled: bool,
    pub credentials_error: Option<String>,
    pub danger_error: Option<String>,
    pub notice: Option<Notice>,
    /// Which section was just saved (`site`, `webhook`, `danger`), from `?saved=`.
    pub saved: String,
    pub is_admin: bool,
    pub tier_has_token: bool,
    pub enabled: bool,
    pub currencies: Vec<&'static str>,
    pub tiers: [&'static str; 3],
}

/// A user who may see the site, as the users page lists them.
#[derive(Debug)]
pub struct MemberRow {
    pub id: String,
    pub email: String,
    /// `owner`, `editor` or `viewer`; empty for an admin.
    pub role: String,
    pub admin: bool,
    pub password_set: bool,
    pub is_me: bool,
}

/// A setup link made by an invitation, shown once.
#[derive(Debug)]
pub struct InviteLink {
    pub email: String,
    pub link: String,
    pub expires: String,
}

#[derive(Template)]
#[template(path = "members.html", config = "assets/console/askama.toml")]
pub struct Members<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub nav: SiteNav,
    pub csrf: &'a str,
    pub rows: Vec<MemberRow>,
    pub roles: [&'static str; 3],
    pub error: Option<String>,
    pub invite_email: String,
    pub invite_role: String,
    /// A new user's setup link (shown only in the answer to the invitation).
    pub link: Option<InviteLink>,
    /// An existing account was given the role.
    pub invited_existing: Option<String>,
    pub saved: bool,
}

// #25 knowledge: the knowledge pages (documents, crawl sources, curated answers) and their confirmation.

/// A document in the knowledge list.
#[derive(Debug)]
pub struct DocumentItem {
    pub id: String,
    pub title: String,
    /// Its URL (crawled) or file name (uploaded, imported).
    pub source: String,
    /// The URL as a link, only when it is http or https.
    pub link: Option<String>,
    /// "file" or "web page", in the page's language.
    pub kind: &'static str,
    pub lang: String,
    pub chunks: i64,
    pub changed: String,
}

#[derive(Template)]
#[template(path = "knowledge.html", config = "assets/console/askama.toml")]
pub struct KnowledgeDocuments<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub nav: SiteNav,
    /// Which knowledge page this is (`knowledge_nav.html`).
    pub sub: &'static str,
    pub csrf: &'a str,
    /// Editors, owners and admins change the knowledge; viewers only read it.
    pub edit: bool,
    pub q: String,
    pub total: u64,
    pub page: usize,
    pub pages_total: usize,
    pub prev: Option<String>,
    pub next: Option<String>,
    pub documents: Vec<DocumentItem>,
    pub done: Option<String>,
    /// What is wrong with an upload (the page is a 422 then).
    pub errors: Vec<String>,
    pub max_size: String,
    pub max_files: usize,
}

/// A crawl source as the sources page shows it.
#[derive(Debug)]
pub struct SourceItem {
    pub url: String,
    pub schedule: String,
    pub options: String,
    pub last_sync: String,
    pub next_sync: String,
    pub pages: i64,
    /// The last crawl's counts, in words.
    pub last: Option<String>,
    pub failed_count: usize,
    /// The last crawl's failed URLs (the first ten) and why.
    pub failed: Vec<(String, String)>,
    pub error: Option<String>,
    /// The running crawl's state in words, while one runs.
    pub running: Option<String>,
    pub done: usize,
    /// The removal's confirmation page.
    pub remove_link: String,
}

#[derive(Template)]
#[template(path = "knowledge_sources.html", config = "assets/console/askama.toml")]
pub struct KnowledgeSources<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub nav: SiteNav,
    pub sub: &'static str,
    pub csrf: &'a str,
    pub edit: bool,
    pub sources: Vec<SourceItem>,
    pub any_running: bool,
    pub form: SourceForm,
    pub error: Option<String>,
    pub done: Option<String>,
    pub default_pages: usize,
}

/// A curated answer in the list.
#[derive(Debug)]
pub struct AnswerItem {
    pub id: String,
    pub question: String,
    pub answer: String,
    pub url: String,
    pub at: String,
}

/// A curated answer's form values, as typed.
#[derive(Debug, Default, Clone)]
pub struct AnswerForm {
    pub question: String,
    pub answer: String,
    pub url: String,
}

#[derive(Template)]
#[template(path = "knowledge_answers.html", config = "assets/console/askama.toml")]
pub struct KnowledgeAnswers<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub nav: SiteNav,
    pub sub: &'static str,
    pub csrf: &'a str,
    pub edit: bool,
    pub answers: Vec<AnswerItem>,
    pub form: AnswerForm,
    pub error: Option<&'a str>,
    pub done: Option<&'a str>,
}

#[derive(Template)]
#[template(path = "knowledge_answer.html", config = "assets/console/askama.toml")]
pub struct KnowledgeAnswer<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub nav: SiteNav,
    pub sub: &'static str,
    pub csrf: &'a str,
    pub answer_id: String,
    pub form: AnswerForm,
    pub error: Option<&'a str>,
}

/// What a confirmation asks about: a title, the thing (a visitor's or user's text, escaped like any),
/// a detail, where the button posts (with hidden fields), and the way back.
#[derive(Debug)]
pub struct Confirm {
    pub title: String,
    pub what: String,
    pub detail: String,
    pub action: String,
    pub fields: Vec<(String, String)>,
    pub button: String,
    pub back: String,
}

#[derive(Template)]
#[template(path = "knowledge_confirm.html", config = "assets/console/askama.toml")]
pub struct KnowledgeConfirm<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub nav: SiteNav,
    pub csrf: &'a str,
    pub c: Confirm,
}

// #25 widget
/// One language's row of the widget editor, as shown (the site's language first, fixed).
#[derive(Debug, Clone)]
pub struct WidgetLangRow {
    pub lang: String,
    /// The site's own language: its tag cannot be changed here.
    pub fixed: bool,
    pub greeting: String,
    /// One question a line.
    pub questions: String,
}

/// The widget editor's form, as shown (the draft, the published settings, or what was sent with an error).
#[derive(Debug, Clone)]
pub struct WidgetForm {
    pub color: String,
    pub position: String,
    pub lead_form: bool,
    /// One origin a line.
    pub origins: String,
    pub languages: Vec<WidgetLangRow>,
}

#[derive(Template)]
#[template(path = "widget.html", config = "assets/console/askama.toml")]
pub struct WidgetEditor<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub nav: SiteNav,
    pub csrf: &'a str,
    pub form: WidgetForm,
    /// What is wrong with the sent form (nothing was saved).
    pub error: Option<String>,
    /// What just happened (saved, published, discarded), as a sentence.
    pub done: Option<&'a str>,
    /// When and by whom the unpublished draft was saved, when there is one.
    pub draft: Option<String>,
    /// The languages the preview can be shown in.
    pub preview_langs: Vec<String>,
    /// The embed tag to copy.
    pub snippet: String,
}

/// The page the preview frame shows: a host page with the real widget, showing the draft.
#[derive(Template)]
#[template(path = "widget_preview.html", config = "assets/console/askama.toml")]
pub struct WidgetPreview<'a> {
    pub t: &'a Texts,
    pub lang: String,
    pub site_id: String,
    pub site_name: String,
    pub token: String,
}

// #25 email
/// One site on the account page: whether it e-mails its owners each new lead.
pub struct LeadEmailRow {
    pub site_id: String,
    pub site_name: String,
    pub on: bool,
}

#[derive(Template)]
#[template(path = "account.html", config = "assets/console/askama.toml")]
pub struct Account<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub csrf: &'a str,
    pub email: &'a str,
    /// Whether `[email]` is configured (otherwise the page says nothing is sent).
    pub email_on: bool,
    pub digest: bool,
    /// The sites the user may manage.
    pub sites: Vec<LeadEmailRow>,
    /// What is wrong with the sent form (nothing was saved).
    pub error: Option<&'a str>,
    pub saved: bool,
}

/// The crawl-source form's values as typed (`knowledge_sources`).
#[derive(Debug, Default, Clone)]
pub struct SourceForm {
    pub url: String,
    pub include: String,
    pub exclude: String,
    pub max_pages: String,
    pub max_depth: String,
    pub every: String,
}
