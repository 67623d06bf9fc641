//! Landing pages: the import shape (the API payload's fields plus `published`), its validation, and the
//! payload served by `GET /v1/landing/{site}/{lang}/{slug}`.

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use super::import::{Checker, FieldErrors};
pub use crate::domain::{Alternate, FaqEntry, Feature, LandingPage, PageBody, PageType, Stat};
use crate::domain::{Lang, Slug, Timestamp};
use crate::store::content::{PublishedPage, SitemapRow, Vertical};

/// One page as written in an import file. Unknown fields are errors here (unlike the API), so a typo in
/// a content file is reported instead of silently dropped.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PageFile {
    site: String,
    lang: String,
    slug: String,
    #[serde(rename = "type")]
    page_type: PageType,
    title: String,
    description: String,
    #[serde(default)]
    faq: Vec<FaqEntry>,
    #[serde(default)]
    features: Vec<Feature>,
    #[serde(default)]
    stats: Vec<Stat>,
    #[serde(default)]
    alternates: Vec<Alternate>,
    #[serde(default)]
    published: bool,
    /// Accepted so an exported payload imports unchanged; the store sets the time.
    #[serde(default)]
    #[allow(dead_code)]
    updated_at: Option<IgnoredAny>,
}

/// The served payload (API.md route 4).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LandingPayload {
    pub site: String,
    pub lang: String,
    pub slug: String,
    #[serde(rename = "type")]
    pub page_type: PageType,
    pub title: String,
    pub description: String,
    pub faq: Vec<FaqEntry>,
    pub features: Vec<Feature>,
    pub stats: Vec<Stat>,
    pub alternates: Vec<Alternate>,
    pub updated_at: Timestamp,
}

/// One entry of `GET /v1/landing/{site}/sitemap-slugs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SitemapEntry {
    pub slug: String,
    pub lang: String,
    #[serde(rename = "type")]
    pub page_type: PageType,
    pub updated_at: Timestamp,
}

impl LandingPayload {
    /// The payload of a published page: only published alternates are listed, and `updatedAt` is the last
    /// change of the payload (the page's own, or a listed alternate's publishing or withdrawal: a withdrawn
    /// alternate changes this payload too, so its time counts even though it is not listed).
    pub fn new(vertical: &Slug, lang: &Lang, slug: &Slug, page: PublishedPage) -> LandingPayload {
        let updated_at = page.alternates.iter().map(|(_, _, at)| *at).fold(page.updated_at, Timestamp::max);
        LandingPayload {
            site: vertical.to_string(),
            lang: lang.to_string(),
            slug: slug.to_string(),
            page_type: page.page_type,
            title: page.title,
            description: page.description,
            faq: page.body.faq,
            features: page.body.features,
            stats: page.body.stats,
            alternates: page.alternates.into_iter().filter(|(_, published, _)| *published).map(|(a, _, _)| a).collect(),
            updated_at,
        }
    }
}

impl From<SitemapRow> for SitemapEntry {
    fn from(r: SitemapRow) -> SitemapEntry {
        SitemapEntry { slug: r.slug.to_string(), lang: r.lang.to_string(), page_type: r.page_type, updated_at: r.updated_at }
    }
}

impl PageFile {
    /// Checks every field; `at` is the JSON path of this page in its file (`""` or `[3]`).
    pub fn validate(self, at: &str, verticals: &[Vertical], errors: &mut FieldErrors) -> Option<LandingPage> {
        let mut c = Checker::new(at, errors);
        let vertical = c.parse("site", Slug::vertical(&self.site));
        let known = vertical.as_ref().and_then(|v| verticals.iter().find(|x| x.slug == *v));
        if vertical.is_some() && known.is_none() {
            c.fail("site", format!("no vertical `{}`; create it first with `sitebot vertical create`", self.site));
        }
        let lang = c.parse("lang", Lang::parse(&self.lang));
        if let (Some(l), Some(v)) = (&lang, known)
            && !v.langs.contains(l)
        {
            c.fail("lang", format!("vertical `{}` offers {}; add `{l}` to its languages first", v.slug, v.langs_list()));
        }
        let slug = c.parse("slug", Slug::parse(&self.slug, 128));
        c.text("title", &self.title, 1, 200);
        c.text("description", &self.description, 1, 2000);
        c.count("faq", self.faq.len(), 100);
        for (i, f) in self.faq.iter().enumerate() {
            c.text(&format!("faq[{i}].question"), &f.question, 1, 500);
            c.text(&format!("faq[{i}].answer"), &f.answer, 1, 5000);
        }
        c.count("features", self.features.len(), 50);
        for (i, f) in self.features.iter().enumerate() {
            c.text(&format!("features[{i}].title"), &f.title, 1, 200);
            c.text(&format!("features[{i}].description"), &f.description, 0, 2000);
            if let Some(icon) = &f.icon {
                c.text(&format!("features[{i}].icon"), icon, 1, 64);
            }
        }
        c.count("stats", self.stats.len(), 50);
        for (i, s) in self.stats.iter().enumerate() {
            c.text(&format!("stats[{i}].label"), &s.label, 1, 100);
            c.text(&format!("stats[{i}].value"), &s.value, 1, 100);
        }
        c.count("alternates", self.alternates.len(), 50);
        let mut alternates = Vec::with_capacity(self.alternates.len());
        for (i, a) in self.alternates.iter().enumerate() {
            let alang = c.parse(&format!("alternates[{i}].lang"), Lang::parse(&a.lang));
            let aslug = c.parse(&format!("alternates[{i}].slug"), Slug::parse(&a.slug, 128));
            if let (Some(al), Some(v)) = (&alang, known)
                && !v.langs.contains(al)
            {
                c.fail(&format!("alternates[{i}].lang"), format!("vertical `{}` offers {}", v.slug, v.langs_list()));
            }
            if alang.is_some() && alang == lang {
                c.fail(&format!("alternates[{i}].lang"), "an alternate is the page in another language, not its own");
            }
            if let (Some(al), Some(asl)) = (alang, aslug) {
                alternates.push(Alternate { lang: al.to_string(), slug: asl.to_string() });
            }
        }
        if !c.ok() {
            return None;
        }
        Some(LandingPage {
            vertical: vertical?,
            lang: lang?,
            slug: slug?,
            page_type: self.page_type,
            title: self.title.trim().to_owned(),
            description: self.description.trim().to_owned(),
            body: PageBody { faq: self.faq, features: self.features, stats: self.stats, alternates },
            published: self.published,
        })
    }
}
