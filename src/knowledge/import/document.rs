//! A parsed document, the shape every import format produces and the chunker consumes. It sits apart
//! from both so that neither imports the other.

/// A parsed document: its title, citation URL and sections.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub source: String,
    pub title: String,
    pub url: Option<String>,
    pub format: &'static str,
    pub sections: Vec<Section>,
}

/// A run of paragraphs under one heading path (empty at the top of a document).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Section {
    pub path: Vec<String>,
    pub paragraphs: Vec<String>,
}
