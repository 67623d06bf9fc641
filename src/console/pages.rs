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
    pub questions: u64,
    pub resolution: String,
    pub leads: u64,
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

#[derive(Template)]
#[template(path = "site.html", config = "assets/console/askama.toml")]
pub struct Site<'a> {
    pub t: &'a Texts,
    pub me: Option<Header<'a>>,
    pub site_id: String,
    pub site_name: String,
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
