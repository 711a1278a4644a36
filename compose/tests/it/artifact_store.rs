//! A:: on an artifact store: save, load, version and publish over real files, versions
//! counting from 1, typed errors for what is missing or malformed.

use std::sync::Arc;

use reel_actors::state::State;
use reel_compose::{A, ArtifactStore, ArtifactStoreError, StoredArtifact};
use serde_json::json;

fn store(name: &str) -> (ArtifactStore, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("reel-compose-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    (ArtifactStore::open(&dir).unwrap(), dir)
}

#[test]
fn saves_are_versions_and_load_reads_any_of_them() {
    let (store, dir) = store("versions");
    assert_eq!(A::version(&store, "summary").unwrap(), None);
    assert_eq!(A::save(&store, "summary", json!("first")).unwrap(), 1);
    assert_eq!(
        A::save(&store, "summary", json!({"text": "second"})).unwrap(),
        2
    );
    assert_eq!(A::version(&store, "summary").unwrap(), Some(2));
    assert_eq!(
        A::load(&store, "summary", Some(1)).unwrap(),
        StoredArtifact {
            name: "summary".into(),
            version: 1,
            mime: "text/plain".into(),
            value: json!("first")
        }
    );
    assert_eq!(
        A::load(&store, "summary", None).unwrap().value,
        json!({"text": "second"})
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("summary/2.json")).unwrap(),
        "{\n  \"name\": \"summary\",\n  \"version\": 2,\n  \"mime\": \"application/json\",\n  \"value\": {\n    \"text\": \"second\"\n  }\n}\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn what_is_missing_or_malformed_is_a_typed_error() {
    let (store, dir) = store("errors");
    assert_eq!(
        A::load(&store, "report", None).unwrap_err().to_string(),
        "artifact `report` has no version saved"
    );
    A::save(&store, "report", json!(1)).unwrap();
    assert!(matches!(
        A::load(&store, "report", Some(7)),
        Err(ArtifactStoreError::NotFound { ref name, version: Some(7) }) if name == "report"
    ));
    assert_eq!(
        A::save(&store, "../escape", json!(1))
            .unwrap_err()
            .to_string(),
        "artifact name `../escape` is not allowed: use letters, digits, `_` and `-`"
    );
    std::fs::write(dir.join("report/2.json"), "not json").unwrap();
    assert!(matches!(
        A::load(&store, "report", None),
        Err(ArtifactStoreError::Parse { .. })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn saves_at_once_get_one_version_each() {
    let (store, dir) = store("concurrent");
    let store = Arc::new(store);
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || A::save(&store, "log", json!(i)).unwrap())
        })
        .collect();
    let mut versions: Vec<u32> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    versions.sort_unstable();
    assert_eq!(versions, [1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(store.versions("log").unwrap(), [1, 2, 3, 4, 5, 6, 7, 8]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn publish_saves_each_declared_output_from_the_state() {
    let (store, dir) = store("publish");
    let artifacts = A::json_output("verdict", "the verdict") + A::text_output("note", "a note");
    let state = State::new();
    state.set("verdict", json!({"ok": true})).await.unwrap();
    assert_eq!(
        A::publish(&store, &artifacts, &state)
            .unwrap_err()
            .to_string(),
        "artifact `note` is declared but not set in the state"
    );
    state.set("note", "fine").await.unwrap();
    assert_eq!(
        A::publish(&store, &artifacts, &state).unwrap(),
        [("verdict".to_owned(), 2), ("note".to_owned(), 1)]
    );
    assert_eq!(A::load(&store, "note", None).unwrap().mime, "text/plain");
    std::fs::remove_dir_all(&dir).unwrap();
}
