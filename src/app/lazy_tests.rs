//! The static documents are built on their first request, once, and shared.

use super::*;

fn app() -> App {
    let config = Config::new("127.0.0.1:8080".parse().unwrap());
    App::new(&config, Arc::new(crate::fuzzing::upstream::Down))
}

fn built(doc: &StaticDoc) -> Option<&Arc<[u8]>> {
    match &doc.body {
        DocBody::Static(_) => None,
        DocBody::Lazy(_, slot) => slot.get(),
    }
}

fn shared(response: Response) -> Arc<[u8]> {
    assert_eq!(response.status, 200);
    match response.body {
        Body::Shared(bytes) => bytes,
        _ => panic!("not a shared body"),
    }
}

fn route<'a>(app: &'a App, path: &str) -> &'a StaticDoc {
    &app.docs[app.routes[path]]
}

#[test]
fn no_document_is_built_at_start_up() {
    let app = app();
    assert!(app.docs.iter().all(|d| built(d).is_none()));
    assert!(built(&app.manifest).is_none());
    assert!(matches!(
        route(&app, "/healthz").body,
        DocBody::Static(b"{\"status\":\"ok\"}")
    ));
}

#[test]
fn a_document_is_built_on_first_get_and_shared_after() {
    let app = app();
    let doc = route(&app, "/llms.txt");
    let first = shared(app.static_route(&Method::Get, doc));
    assert_eq!(
        &first[..],
        crate::docs::render(crate::docs::DOCS[0].template, "http://127.0.0.1:8080").as_bytes()
    );
    let again = shared(app.static_route(&Method::Head, doc));
    assert!(Arc::ptr_eq(&first, &again));
    // Only that document was built.
    assert_eq!(app.docs.iter().filter(|d| built(d).is_some()).count(), 1);
}

#[test]
fn both_server_card_paths_share_one_body() {
    let app = app();
    let a = shared(app.static_route(&Method::Get, route(&app, "/mcp/server-card")));
    let b = shared(app.static_route(
        &Method::Get,
        route(&app, "/.well-known/mcp/server-card.json"),
    ));
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(&a[..], server_card_text("http://127.0.0.1:8080").as_bytes());
    let card: serde_json::Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(card["remotes"][0]["url"], "http://127.0.0.1:8080/mcp");
}
