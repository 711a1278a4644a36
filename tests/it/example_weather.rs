//! The `weather` example runs: its assistant, one `Live::builder()` chain, holds the whole
//! conversation with the bundled tape on loopback (the tape server matches every frame it
//! sends, so the fluent chain is frame for frame the demo's application).

#[allow(dead_code)] // the example's `main` is not called here
#[path = "../../examples/weather.rs"]
mod weather;

use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_weather_example_talks_to_the_bundled_tape() {
    let conversation = weather::run(weather::Target::BundledTape { speed: None })
        .await
        .unwrap();
    assert_eq!(
        conversation.answers,
        [
            "Hi! I'm your weather assistant. Which city would you like the weather for?",
            "It's 14°C and cloudy in London right now. Anything else I can help with?",
            "You're welcome. Have a lovely day!",
        ]
    );
    assert_eq!(
        conversation.tools,
        [(
            "get_weather".to_owned(),
            json!({"city": "London", "temp_c": 14, "conditions": "cloudy"})
        )]
    );
    assert_eq!(
        conversation.phases,
        ["greeting → forecast", "forecast → farewell"]
    );
}
