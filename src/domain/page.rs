//! Landing pages as the store keeps them: what a page is for, its lists, and a validated page. The
//! payload a route serves is built from these by `content::page`.

use serde::{Deserialize, Serialize};

use super::{Lang, Slug};

/// What a page is for; sitemaps group by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageType {
    Home,
    Feature,
    UseCase,
    Comparison,
    Faq,
    Pricing,
    Article,
}

impl PageType {
    pub const ALL: [PageType; 7] =
        [PageType::Home, PageType::Feature, PageType::UseCase, PageType::Comparison, PageType::Faq, PageType::Pricing, PageType::Article];

    pub fn as_str(self) -> &'static str {
        match self {
            PageType::Home => "home",
            PageType::Feature => "feature",
            PageType::UseCase => "use-case",
            PageType::Comparison => "comparison",
            PageType::Faq => "faq",
            PageType::Pricing => "pricing",
            PageType::Article => "article",
        }
    }

    pub fn parse(s: &str) -> Option<PageType> {
        PageType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaqEntry {
    pub question: String,
    pub answer: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Feature {
    pub title: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stat {
    pub label: String,
    pub value: String,
}

/// The same page in another language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Alternate {
    pub lang: String,
    pub slug: String,
}

/// The lists of a page, stored together as one JSON column.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageBody {
    pub faq: Vec<FaqEntry>,
    pub features: Vec<Feature>,
    pub stats: Vec<Stat>,
    pub alternates: Vec<Alternate>,
}

/// A validated page, ready to store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LandingPage {
    pub vertical: Slug,
    pub lang: Lang,
    pub slug: Slug,
    pub page_type: PageType,
    pub title: String,
    pub description: String,
    pub body: PageBody,
    pub published: bool,
}
