use std::time::Duration;

use crate::knowledge::answer::generate::client::*;
use crate::knowledge::answer::generate::fake::{Script, chunk, serve};

fn config(base: &str, timeout_secs: u64) -> AnswerConfig {
    AnswerConfig { openai_base_url: Some(base.into()), model: "test-model".into(), timeout_secs, allow_private_networks: true, ..AnswerConfig::default() }
}

fn passages() -> Vec<NumberedPassage> {
    vec![NumberedPassage { n: 1, text: "The studio opens at 8:00.".into() }, NumberedPassage { n: 2, text: "A workshop costs 350 euros.".into() }]
}

async fn collect(client: &ChatClient) -> (Vec<Event>, Option<ClientError>) {
    let p = passages();
    let turns = vec![Exchange { question: "Where is the studio?".into(), answer: "In Freiburg [1].".into() }];
    let mut rx = client.stream(&ChatRequest { question: "When does it open?", passages: &p, turns: &turns });
    let (mut events, mut error) = (Vec::new(), None);
    while let Some(item) = rx.recv().await {
        match item {
            Ok(e) => events.push(e),
            Err(e) => error = Some(e),
        }
    }
    (events, error)
}

const NO_DELAY: Duration = Duration::ZERO;

#[tokio::test]
async fn a_scripted_streamed_reply_is_read_to_the_end() {
    let usage = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":9}}\n\n";
    let steps = vec![
        (NO_DELAY, ": keep-alive\n\n".to_owned()),
        (NO_DELAY, chunk("It opens ")),
        (NO_DELAY, chunk("at 8:00 [1].")),
        (NO_DELAY, usage.to_owned()),
        (NO_DELAY, "data: [DONE]\n\n".to_owned()),
    ];
    let (base, body) = serve(Script { status: 200, steps }).await;
    let client = ChatClient::new(&config(&base, 5)).unwrap();
    let (events, error) = collect(&client).await;
    assert_eq!(error, None);
    assert_eq!(events, vec![Event::Text("It opens ".into()), Event::Text("at 8:00 [1].".into()), Event::Usage { prompt_tokens: 120, completion_tokens: 9 }]);
    let body: serde_json::Value = serde_json::from_str(&body.await.unwrap()).unwrap();
    assert_eq!(body["stream"], true);
    assert_eq!(body["model"], "test-model");
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with(SYSTEM_PROMPT));
    assert!(system.contains("[1] The studio opens at 8:00.") && system.contains("[2] A workshop costs 350 euros."), "{system}");
    assert_eq!(body["messages"][1]["content"], "Where is the studio?");
    assert_eq!(body["messages"][2]["role"], "assistant");
    assert_eq!(body["messages"][3]["content"], "When does it open?");
}

#[tokio::test]
async fn a_500_is_a_status_error() {
    let (base, _body) = serve(Script { status: 500, steps: vec![(NO_DELAY, "oops".into())] }).await;
    let (_, error) = collect(&ChatClient::new(&config(&base, 5)).unwrap()).await;
    assert_eq!(error, Some(ClientError::Status(500)));
}

#[tokio::test]
async fn a_slow_server_hits_the_timeout() {
    let steps = vec![(NO_DELAY, chunk("It opens ")), (Duration::from_secs(3), chunk("at 8:00 [1]."))];
    let (base, _body) = serve(Script { status: 200, steps }).await;
    let (events, error) = collect(&ChatClient::new(&config(&base, 1)).unwrap()).await;
    assert_eq!(events, vec![Event::Text("It opens ".into())]);
    assert_eq!(error, Some(ClientError::Timeout));
}

#[tokio::test]
async fn a_closed_port_is_unreachable() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let (_, error) = collect(&ChatClient::new(&config(&base, 5)).unwrap()).await;
    assert!(matches!(error, Some(ClientError::Unreachable(_))), "{error:?}");
}

#[tokio::test]
async fn a_malformed_stream_is_malformed() {
    let (base, _body) = serve(Script { status: 200, steps: vec![(NO_DELAY, "data: {not json\n\n".into())] }).await;
    let (_, error) = collect(&ChatClient::new(&config(&base, 5)).unwrap()).await;
    assert!(matches!(error, Some(ClientError::Malformed(_))), "{error:?}");
    let (base, _body) = serve(Script { status: 200, steps: vec![(NO_DELAY, chunk("cut off"))] }).await;
    let (_, error) = collect(&ChatClient::new(&config(&base, 5)).unwrap()).await;
    assert!(matches!(error, Some(ClientError::Malformed(_))), "a stream without [DONE]: {error:?}");
}

#[test]
fn the_endpoint_follows_the_webhook_policy() {
    let strict = AnswerConfig::default();
    assert_eq!(endpoint("https://api.example.com/v1/", &strict).unwrap().as_str(), "https://api.example.com/v1/chat/completions");
    assert!(endpoint("http://api.example.com/v1", &strict).is_err());
    assert!(endpoint("https://127.0.0.1:8080/v1", &strict).is_err());
    assert!(endpoint("https://localhost/v1", &strict).is_err());
    let local = AnswerConfig { allow_private_networks: true, ..AnswerConfig::default() };
    assert!(endpoint("http://127.0.0.1:11434/v1", &local).is_ok());
}
