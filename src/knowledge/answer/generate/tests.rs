use std::time::{Duration, Instant};

use crate::knowledge::answer::generate::fake::{Script, chunk, serve};
use crate::knowledge::answer::generate::*;
use crate::ratelimit::ManualClock;

fn passages() -> Vec<NumberedPassage> {
    vec![
        NumberedPassage { n: 1, text: "The studio opens at 8:00 on weekdays.".into() },
        NumberedPassage { n: 2, text: "A one-day workshop costs 350 euros.".into() },
    ]
}

fn generator(base: &str) -> Generator {
    let config =
        AnswerConfig { openai_base_url: Some(base.into()), model: "m".into(), timeout_secs: 5, allow_private_networks: true, ..AnswerConfig::default() };
    Generator::new(&config, Arc::new(ManualClock::default())).unwrap()
}

const NOW: Duration = Duration::ZERO;

fn done() -> (Duration, String) {
    (NOW, "data: [DONE]\n\n".into())
}

#[tokio::test]
async fn the_first_validated_sentence_arrives_before_the_server_finishes() {
    let steps = vec![
        (NOW, chunk("The studio opens at 8:00 ")),
        (NOW, chunk("on weekdays [1]. A one-day")),
        (Duration::from_millis(1500), chunk(" workshop costs 350 euros [2].")),
        done(),
    ];
    let (base, _) = serve(Script { status: 200, steps }).await;
    let g = generator(&base);
    let started = Instant::now();
    let answer = g.start("When do you open?", &passages(), &[]).await.expect("a generative answer");
    assert_eq!(answer.first, "The studio opens at 8:00 on weekdays [1].");
    assert!(started.elapsed() < Duration::from_millis(1000), "first sentence after {:?}", started.elapsed());
    assert_eq!(answer.collect().await, "The studio opens at 8:00 on weekdays [1]. A one-day workshop costs 350 euros [2].");
    assert!(started.elapsed() >= Duration::from_millis(1500));
}

#[tokio::test]
async fn the_first_failing_sentence_ends_the_answer() {
    let steps = vec![
        (NOW, chunk("The studio opens at 8:00 on weekdays [1]. A workshop costs 300 euros [2]. ")),
        (NOW, chunk("A one-day workshop costs 350 euros [2].")),
        done(),
    ];
    let (base, _) = serve(Script { status: 200, steps }).await;
    let answer = generator(&base).start("q", &passages(), &[]).await.unwrap();
    assert_eq!(answer.collect().await, "The studio opens at 8:00 on weekdays [1].");
}

#[tokio::test]
async fn no_supported_sentence_means_the_extractive_answer() {
    let steps = vec![(NOW, chunk("We are open around the clock, every day of the year.")), done()];
    let (base, _) = serve(Script { status: 200, steps }).await;
    let g = generator(&base);
    assert!(g.start("q", &passages(), &[]).await.is_none());
    assert_eq!(g.breaker().state(), circuit::State::Closed { failures: 0 }, "the endpoint itself worked");
}

#[tokio::test]
async fn endpoint_failures_open_the_circuit() {
    let g = {
        let (base, _) = serve(Script { status: 503, steps: vec![] }).await;
        generator(&base)
    };
    assert!(g.start("q", &passages(), &[]).await.is_none());
    // The fake server answers once; the next attempts find it closed.
    assert!(g.start("q", &passages(), &[]).await.is_none());
    assert!(g.start("q", &passages(), &[]).await.is_none());
    assert!(matches!(g.breaker().state(), circuit::State::Open { .. }));
    assert!(!g.breaker().allow());
}
