//! Endpoints: URLs and headers per platform, resolution from the environment, and
//! credentials that never show.

use std::collections::HashMap;

use reel_protocol::{
    ApiEndpoint, Credential, EndpointError, FrameKind, Platform, Secret, percent_decode,
    percent_encode, redact_url,
};

const KEY: &str = "AIzaSy-very-secret-key";

fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

#[test]
fn google_ai_puts_the_key_in_the_query() {
    let request = ApiEndpoint::google_ai(KEY).connect_request();
    assert_eq!(
        request.url_with_credentials(),
        "wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent?key=AIzaSy-very-secret-key"
    );
    assert_eq!(
        request.redacted_url(),
        "wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent?key=REDACTED"
    );
    assert!(request.headers.is_empty());
}

#[test]
fn ephemeral_tokens_use_the_constrained_method() {
    let request = ApiEndpoint::google_ai_ephemeral("auth_tokens/abc+/=").connect_request();
    assert_eq!(
        request.url_with_credentials(),
        "wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained?access_token=auth_tokens%2Fabc%2B%2F%3D"
    );
    assert!(request.redacted_url().ends_with("?access_token=REDACTED"));
}

#[test]
fn vertex_uses_a_regional_host_and_a_bearer_header() {
    let endpoint = ApiEndpoint::vertex("proj", "europe-west4", "ya29.token");
    let request = endpoint.connect_request();
    assert_eq!(
        request.url_with_credentials(),
        "wss://europe-west4-aiplatform.googleapis.com/ws/google.cloud.aiplatform.v1beta1.LlmBidiService/BidiGenerateContent"
    );
    assert_eq!(request.headers.len(), 1);
    assert_eq!(request.headers[0].0, "Authorization");
    assert_eq!(request.headers[0].1.expose(), "Bearer ya29.token");
    assert_eq!(endpoint.platform().frame_kind(), FrameKind::Binary);
    assert!(!endpoint.platform().supports_async_tools());

    let global = ApiEndpoint::vertex("proj", "global", "t").connect_request();
    assert!(
        global
            .url_with_credentials()
            .starts_with("wss://aiplatform.googleapis.com/ws/")
    );
    let private = ApiEndpoint::vertex_with_host("proj", "us-central1", "t", "private.example:443");
    assert_eq!(private.base_url(), "wss://private.example:443");
}

#[test]
fn a_local_server_replaces_the_host_only() {
    let endpoint = ApiEndpoint::google_ai(KEY).with_base_url("ws://127.0.0.1:9000/");
    assert_eq!(
        endpoint.connect_request().redacted_url(),
        "ws://127.0.0.1:9000/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent?key=REDACTED"
    );
    let anonymous = endpoint.without_credential();
    assert_eq!(anonymous.credential(), &Credential::None);
    assert!(
        !anonymous
            .connect_request()
            .url_with_credentials()
            .contains('?')
    );
}

#[test]
fn model_names_become_resource_names() {
    assert_eq!(
        Platform::GoogleAi.model_resource("gemini-x"),
        "models/gemini-x"
    );
    assert_eq!(
        Platform::GoogleAi.model_resource("models/gemini-x"),
        "models/gemini-x"
    );
    let vertex = Platform::Vertex {
        project: "p".into(),
        location: "l".into(),
    };
    assert_eq!(
        vertex.model_resource("models/gemini-x"),
        "projects/p/locations/l/publishers/google/models/gemini-x"
    );
    assert_eq!(vertex.model_resource("projects/q/x"), "projects/q/x");
}

#[test]
fn the_environment_picks_google_ai_keys_in_priority_order() {
    let endpoint = ApiEndpoint::from_vars(vars(&[
        ("GOOGLE_API_KEY", "third"),
        ("GOOGLE_GENAI_API_KEY", "second"),
        ("GEMINI_API_KEY", ""),
    ]))
    .unwrap();
    assert_eq!(
        endpoint.credential(),
        &Credential::ApiKey(Secret::new("second"))
    );
    let endpoint = ApiEndpoint::from_vars(vars(&[
        ("GEMINI_API_KEY", "first"),
        ("GOOGLE_API_KEY", "third"),
    ]))
    .unwrap();
    assert_eq!(
        endpoint.credential(),
        &Credential::ApiKey(Secret::new("first"))
    );
    assert_eq!(
        ApiEndpoint::from_vars(vars(&[])),
        Err(EndpointError::MissingApiKey)
    );
}

#[test]
fn the_environment_selects_vertex() {
    let endpoint = ApiEndpoint::from_vars(vars(&[
        ("GOOGLE_GENAI_USE_VERTEXAI", "TRUE"),
        ("GOOGLE_CLOUD_PROJECT", "proj"),
        ("GOOGLE_ACCESS_TOKEN", "tok"),
        ("GEMINI_API_KEY", "ignored"),
    ]))
    .unwrap();
    assert_eq!(
        endpoint.platform(),
        &Platform::Vertex {
            project: "proj".into(),
            location: "us-central1".into()
        }
    );
    assert_eq!(
        ApiEndpoint::from_vars(vars(&[("GOOGLE_GENAI_USE_VERTEXAI", "1")])),
        Err(EndpointError::MissingProject)
    );
    assert_eq!(
        ApiEndpoint::from_vars(vars(&[
            ("GOOGLE_GENAI_USE_VERTEXAI", "1"),
            ("GOOGLE_CLOUD_PROJECT", "proj")
        ])),
        Err(EndpointError::MissingAccessToken)
    );
    let google = ApiEndpoint::from_vars(vars(&[
        ("GOOGLE_GENAI_USE_VERTEXAI", "false"),
        ("GEMINI_API_KEY", "k"),
    ]))
    .unwrap();
    assert_eq!(google.platform(), &Platform::GoogleAi);
}

#[test]
fn error_texts_say_what_to_set() {
    assert!(
        EndpointError::MissingApiKey
            .to_string()
            .starts_with("missing required environment variable: GEMINI_API_KEY (or GOOGLE_GENAI_API_KEY / GOOGLE_API_KEY)")
    );
    assert!(
        EndpointError::MissingProject
            .to_string()
            .starts_with("GOOGLE_CLOUD_PROJECT is required for Vertex AI")
    );
    assert!(
        EndpointError::MissingAccessToken
            .to_string()
            .contains("set GOOGLE_ACCESS_TOKEN")
    );
}

#[test]
fn credentials_never_show_in_debug_or_display() {
    let endpoints = [
        ApiEndpoint::google_ai(KEY),
        ApiEndpoint::google_ai_ephemeral(KEY),
        ApiEndpoint::vertex("p", "l", KEY),
    ];
    for endpoint in endpoints {
        let request = endpoint.connect_request();
        for text in [
            format!("{endpoint:?}"),
            format!("{request:?}"),
            format!("{:?}", endpoint.credential()),
            request.redacted_url(),
        ] {
            assert!(!text.contains(KEY), "leaked in {text}");
        }
    }
    let secret = Secret::new(KEY);
    assert_eq!(format!("{secret}"), "[REDACTED]");
    assert_eq!(format!("{secret:?}"), "[REDACTED]");
}

#[test]
fn percent_escapes_round_trip_and_bad_ones_stay_literal() {
    // Unreserved characters stay, everything else is `%XX` in upper-case hex, UTF-8 bytewise.
    assert_eq!(
        percent_encode("AZaz09-_.~ /+=?&%é"),
        "AZaz09-_.~%20%2F%2B%3D%3F%26%25%C3%A9"
    );
    assert_eq!(
        percent_decode("AZaz09-_.~%20%2F%2B%3D%3F%26%25%C3%A9"),
        "AZaz09-_.~ /+=?&%é".as_bytes()
    );
    // Lower-case hex decodes too; `+` is not a space here (query readers replace it first).
    assert_eq!(percent_decode("%2f+%c3%a9"), "/+é".as_bytes());
    // A bad or cut-off escape is kept as it is, byte for byte: `%+4` is not hex (a signed
    // number parser would read it as 4), nor is `%zz`, and `%2` at the end is too short.
    assert_eq!(percent_decode("%+41%zz%2"), b"%+41%zz%2");
    assert_eq!(percent_decode("%-1"), b"%-1");
}

#[test]
fn redaction_keeps_everything_but_credentials() {
    assert_eq!(redact_url("wss://h/p"), "wss://h/p");
    assert_eq!(
        redact_url("wss://h/p?key=abc&alt=json#frag"),
        "wss://h/p?key=REDACTED&alt=json#frag"
    );
    assert_eq!(
        redact_url("ws://h/p?access_token=t&keyboard=1"),
        "ws://h/p?access_token=REDACTED&keyboard=1"
    );
}

#[test]
fn a_base_url_moves_the_host_and_a_loopback_one_needs_no_key() {
    // A local `reel serve`: no key, the SDKs' variable, http spelled as the SDKs take it.
    let local = ApiEndpoint::from_vars(vars(&[(
        "GOOGLE_GEMINI_BASE_URL",
        "http://127.0.0.1:9000/",
    )]))
    .unwrap();
    assert_eq!(local.base_url(), "ws://127.0.0.1:9000");
    assert_eq!(local.credential(), &Credential::None);
    assert_eq!(
        local.connect_request().url_with_credentials(),
        "ws://127.0.0.1:9000/ws/google.ai.generativelanguage.v1.GenerativeService.BidiGenerateContent"
    );
    for host in ["ws://localhost:1", "http://[::1]:2", "ws://127.3.4.5"] {
        let endpoint = ApiEndpoint::from_vars(vars(&[("GOOGLE_GEMINI_BASE_URL", host)])).unwrap();
        assert_eq!(endpoint.credential(), &Credential::None, "{host}");
    }
    // A key, when there is one, still goes with it.
    let keyed = ApiEndpoint::from_vars(vars(&[
        ("GOOGLE_GEMINI_BASE_URL", "https://proxy.example:8443"),
        ("GEMINI_API_KEY", "k"),
    ]))
    .unwrap();
    assert_eq!(keyed.base_url(), "wss://proxy.example:8443");
    assert_eq!(keyed.credential(), &Credential::ApiKey(Secret::new("k")));
    // A host that is not this machine still needs a key.
    assert_eq!(
        ApiEndpoint::from_vars(vars(&[("GOOGLE_GEMINI_BASE_URL", "http://10.0.0.1:9000")])),
        Err(EndpointError::MissingApiKey)
    );
    // Vertex reads its own variable.
    let vertex = ApiEndpoint::from_vars(vars(&[
        ("GOOGLE_GENAI_USE_VERTEXAI", "true"),
        ("GOOGLE_CLOUD_PROJECT", "p"),
        ("GOOGLE_VERTEX_BASE_URL", "http://localhost:7000"),
        ("GOOGLE_GEMINI_BASE_URL", "http://ignored:1"),
    ]))
    .unwrap();
    assert_eq!(vertex.base_url(), "ws://localhost:7000");
    assert_eq!(vertex.credential(), &Credential::None);
}

#[test]
fn a_bad_base_url_says_which_variable_and_why() {
    let error =
        ApiEndpoint::from_vars(vars(&[("GOOGLE_GEMINI_BASE_URL", "127.0.0.1:9000")])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "GOOGLE_GEMINI_BASE_URL=127.0.0.1:9000 is not a usable base URL: it has no scheme (use http://, https://, ws:// or wss://)"
    );
    let error = ApiEndpoint::from_vars(vars(&[(
        "GOOGLE_GEMINI_BASE_URL",
        "http://127.0.0.1:9000/v1beta?key=SECRET",
    )]))
    .unwrap_err();
    let text = error.to_string();
    assert!(!text.contains("SECRET"), "{text}");
    assert!(
        text.ends_with("it must be scheme://host[:port] only: no path, query or user"),
        "{text}"
    );
    assert_eq!(
        ApiEndpoint::from_vars(vars(&[("GOOGLE_GEMINI_BASE_URL", "ftp://h")]))
            .unwrap_err()
            .to_string(),
        "GOOGLE_GEMINI_BASE_URL=ftp://h is not a usable base URL: the scheme is not http, https, ws or wss"
    );
}
