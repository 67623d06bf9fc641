//! `sitebot insights`: what a site's visitors asked that the knowledge did not answer well, for the
//! operator to fix (a document, or a curated answer: `sitebot knowledge answer add`).
//!
//! Unanswered questions are grouped by meaning: each is embedded with the site's model (as a query)
//! and joins the first group whose centroid it is at least `GROUP_SIMILARITY` close to, else starts
//! one (greedy, newest question first, so each group's first example is its latest). Groups come
//! largest first. At most `MAX_UNANSWERED` questions are read: the report stays seconds long on a busy
//! site, and the newest are the ones worth fixing.

use serde::Serialize;

use crate::domain::{SiteId, Timestamp};
use crate::knowledge::embedding::model::Purpose;
use crate::knowledge::embedding::{EmbedError, Embedder};
use crate::store::insights::{Asked, CitedSource, DayResolution, ThumbsDown};
use crate::store::{Store, StoreError};

/// Questions this close (cosine of their query embeddings) to a group's centroid join the group. With
/// multilingual-e5-small, rewordings of one question score 0.90-0.98 against each other and different
/// questions about the same business 0.80-0.87 ("Do you accept credit cards?" against "Do you offer
/// dental implants?" 0.86; `tests/api/insights.rs`).
pub const GROUP_SIMILARITY: f32 = 0.9;
/// Unanswered questions read at most (the newest).
pub const MAX_UNANSWERED: usize = 2000;
/// Examples shown per group.
const EXAMPLES: usize = 3;
/// Rows of each list.
const LIST: usize = 10;

#[derive(Debug, thiserror::Error)]
pub enum InsightsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
}

/// Unanswered questions that mean the same thing.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    pub count: usize,
    /// Distinct wordings, newest first, at most three.
    pub examples: Vec<String>,
    pub last_asked: Timestamp,
}

/// The report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Insights {
    pub since: Timestamp,
    pub questions: u64,
    pub resolved: u64,
    pub resolution_rate: f64,
    pub unanswered: Vec<Group>,
    /// Answered questions whose best source scored below `weak_below`, lowest first.
    pub weak_below: f32,
    pub weak_answers: Vec<Asked>,
    pub thumbs_down: Vec<ThumbsDown>,
    pub top_sources: Vec<CitedSource>,
    pub by_day: Vec<DayResolution>,
}

/// Builds the report of `site` since `since` (blocking: reads the store, embeds on the pool).
pub fn report(store: &Store, embedder: &Embedder, site: &SiteId, since: Timestamp, weak_below: f32) -> Result<Insights, InsightsError> {
    let insights = store.site(*site).insights();
    let unanswered = insights.unanswered(since, MAX_UNANSWERED)?;
    let texts: Vec<String> = unanswered.iter().map(|a| a.question.clone()).collect();
    let vectors = if texts.is_empty() { Vec::new() } else { embedder.embed_parallel_blocking(&texts, Purpose::Query)? };
    let by_day = insights.resolution_by_day(since)?;
    let (questions, resolved) = by_day.iter().fold((0, 0), |(q, r), d| (q + d.questions, r + d.resolved));
    Ok(Insights {
        since,
        questions,
        resolved,
        resolution_rate: if questions == 0 { 0.0 } else { (resolved as f64 / questions as f64 * 10_000.0).round() / 10_000.0 },
        unanswered: group(&unanswered, &vectors, GROUP_SIMILARITY),
        weak_below,
        weak_answers: insights.weak_answers(since, weak_below, LIST)?,
        thumbs_down: insights.thumbs_down(since, LIST)?,
        top_sources: insights.top_sources(since, LIST)?,
        by_day,
    })
}

struct Building {
    /// Sum of the members' unit vectors: its direction is the centroid's.
    sum: Vec<f32>,
    group: Group,
}

impl Building {
    fn similarity(&self, v: &[f32]) -> f32 {
        let norm = self.sum.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm == 0.0 { 0.0 } else { self.sum.iter().zip(v).map(|(a, b)| a * b).sum::<f32>() / norm }
    }
}

/// Greedy grouping of `asked` (newest first) by their unit `vectors`; largest groups first.
pub fn group(asked: &[Asked], vectors: &[Vec<f32>], min_similarity: f32) -> Vec<Group> {
    let mut groups: Vec<Building> = Vec::new();
    for (a, v) in asked.iter().zip(vectors) {
        let best = groups.iter_mut().map(|g| (g.similarity(v), g)).filter(|(s, _)| *s >= min_similarity).max_by(|x, y| x.0.total_cmp(&y.0));
        match best {
            Some((_, g)) => {
                g.sum.iter_mut().zip(v).for_each(|(s, x)| *s += x);
                g.group.count += 1;
                let seen = g.group.examples.iter().any(|e| e.eq_ignore_ascii_case(&a.question));
                if !seen && g.group.examples.len() < EXAMPLES {
                    g.group.examples.push(a.question.clone());
                }
            }
            None => groups.push(Building { sum: v.clone(), group: Group { count: 1, examples: vec![a.question.clone()], last_asked: a.at } }),
        }
    }
    let mut out: Vec<Group> = groups.into_iter().map(|b| b.group).collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then(b.last_asked.cmp(&a.last_asked)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(q: &str, at: i64) -> Asked {
        Asked { query_id: format!("qry_{at}"), question: q.into(), at: Timestamp::from_millis(at), top_score: None }
    }

    fn unit(v: [f32; 2]) -> Vec<f32> {
        let n = (v[0] * v[0] + v[1] * v[1]).sqrt();
        vec![v[0] / n, v[1] / n]
    }

    #[test]
    fn close_vectors_group_and_the_largest_group_comes_first() {
        let a = [asked("parking?", 5), asked("other", 4), asked("Parking?", 3), asked("where to park", 2), asked("other too", 1)];
        let v = [unit([1.0, 0.0]), unit([0.0, 1.0]), unit([1.0, 0.05]), unit([1.0, 0.1]), unit([0.05, 1.0])];
        let groups = group(&a, &v, 0.95);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].count, 3);
        // Case-insensitive duplicates are one example; the newest wording comes first.
        assert_eq!(groups[0].examples, vec!["parking?", "where to park"]);
        assert_eq!(groups[0].last_asked, Timestamp::from_millis(5));
        assert_eq!(groups[1].count, 2);
    }
}
