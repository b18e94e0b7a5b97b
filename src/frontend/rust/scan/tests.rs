use super::*;

#[test]
fn mentions_skip_comments_and_literals() {
    let s = scan(
        "// save\n/* outer /* nested save */ save */ fn run() { let s = \"save\"; \
             let r = r#\"save \" save\"#; let c = '\\''; let l: &'static str = x; \
             let b = b'{'; call(); }",
    );
    assert!(s.idents.contains("run"));
    assert!(s.idents.contains("call"));
    assert!(!s.idents.contains("save"));
    assert!(!s.idents.contains("static"));
    assert_eq!(s.fns, ["run"]);
}

#[test]
fn module_level_types_only() {
    let s = scan(
        "pub struct Repo { pool: P }\nmod inner { pub enum Kind { A } }\n\
             impl Repo { type Out = u8; fn new() -> Self { struct Local; todo!() } }\n\
             pub trait Sink {}\ntype Db = Pool;\nconst SQL: &str = \"x\";\nstatic mut N: u8 = 0;\n\
             const fn f() {}",
    );
    let types: Vec<(&str, bool)> = s.types.iter().map(|t| (t.name, t.is_trait)).collect();
    assert_eq!(
        types,
        [
            ("Repo", false),
            ("Kind", false),
            ("Sink", true),
            ("Db", false)
        ]
    );
    assert_eq!(s.consts, ["SQL", "N"]);
    assert_eq!(s.fns, ["new", "f"]);
}

#[test]
fn functions_carry_their_impl_type_and_test_gating() {
    let s = scan(
            "impl<T: Clone> Handler for crate::svc::Worker<T> where T: Send {\n\
             fn handle(&self) { fn nested() {} }\n}\n\
             impl Repo { pub async fn save(&self) {} }\n\
             trait Sink { fn put(&self) {} fn take(&self) -> [u8; 4]; fn peek(&self) -> u8 { 0 } }\n\
             fn f() -> impl Future<Output = ()> { async {} }\n\
             #[cfg(test)]\nmod tests { fn helper() {} }\n#[test]\nfn t() {}\n",
        );
    let items: Vec<(&str, Option<&str>, Option<&str>, bool)> = s
        .items
        .iter()
        .map(|f| (f.name, f.self_type, f.trait_name, f.test))
        .collect();
    assert_eq!(
        items,
        [
            ("handle", Some("Worker"), Some("Handler"), false),
            ("save", Some("Repo"), None, false),
            ("put", Some("Sink"), Some("Sink"), false),
            ("peek", Some("Sink"), Some("Sink"), false),
            ("f", None, None, false),
            ("helper", None, None, true),
            ("t", None, None, true),
        ]
    );
    assert!(s.fns.contains(&"nested"));
}

#[test]
fn functions_know_their_inline_module() {
    let s = scan(
            "fn a() {}\n#[cfg(feature = \"x\")]\npub mod fds { pub fn b() {} mod inner { fn c() {} } }\n\
             mod m;\nfn d() {}\n",
        );
    let items: Vec<(&str, Vec<&str>)> =
        s.items.iter().map(|f| (f.name, f.module.clone())).collect();
    assert_eq!(
        items,
        [
            ("a", vec![]),
            ("b", vec!["fds"]),
            ("c", vec!["fds", "inner"]),
            ("d", vec![])
        ]
    );
}

#[test]
fn methods_know_their_receiver() {
    let s = scan(
            "impl W {\n fn a(&self) {}\n fn b<'a, T: Into<Vec<u8>>>(&'a mut self, t: T) {}\n\
             fn c(self: Box<Self>) {}\n fn d(mut self) {}\n fn e() -> Self { todo!() }\n\
             fn f(x: u8, s: &str) {}\n fn g<F: Fn(u8) -> u8>(f: F) {}\\n fn i<F: Fn() -> u8>(&self, f: F) {}\n}\nfn h(&self) {}\n",
        );
    let items: Vec<(&str, bool)> = s.items.iter().map(|f| (f.name, f.has_self)).collect();
    assert_eq!(
        items,
        [
            ("a", true),
            ("b", true),
            ("c", true),
            ("d", true),
            ("e", false),
            ("f", false),
            ("g", false),
            ("i", true),
            ("h", true),
        ]
    );
}

#[test]
fn calls_are_identifiers_before_parentheses() {
    let s = scan(
            "fn handle(config: Config) { let client = make(config); client.send (x); \
             parse::<u8>(s); Vec::<u8>::new(); y.map::<u8>(z); println!(\"{}\", fmt(y)); let f = run; }",
        );
    let sorted = |set: &HashSet<&'static str>| {
        let mut v: Vec<&str> = set.iter().copied().collect();
        v.sort_unstable();
        v
    };
    // `Vec::<u8>` reads as a call too: over-approximate, never under.
    assert_eq!(sorted(&s.calls), ["Vec", "fmt", "make", "parse"]);
    assert_eq!(sorted(&s.path_calls), ["new"]);
    assert_eq!(sorted(&s.method_calls), ["map", "send"]);
    assert!(s.idents.contains("run") && s.idents.contains("config"));
}

#[test]
fn ignored_ranges_are_doc_comments_and_module_level_test_bodies() {
    let text = "#[test]\nfn t1() { a(); }\n\
             #[tokio::test(flavor = \"multi_thread\")]\npub async fn t2() { b(); }\n\
             #[cfg(test)]\nmod t3 { fn c() {} }\n\
             #[cfg(all(test, feature = \"x\"))]\nimpl Repo { fn d() {} }\n\
             #[cfg(test)]\n#[allow(unused)]\npub(crate) mod t5 { #[test] fn e() {} }\n\
             mod outer { #[test] fn t6() { f(); } }\n\
             #[cfg(feature = \"test\")]\nmod n1 { fn g() {} }\n\
             #[cfg_attr(test, allow(unused))]\nfn n2() { x(); }\n\
             #[cfg(test)]\nmod n3;\n#[cfg(test)]\nuse n4::X;\nfn n5() { h(); }\n\
             impl N6 { #[test] fn i() { j(); } }\n\
             fn n7() { #[cfg(test)] fn k() { l(); } }\n\
             mac!( #[test] fn n8() { m(); } );\n\
             #[cfg(test)]\nconst N9: S = S { n: 1 };\n\
             #[cfg(testing)]\nfn n10() { o(); }\n\
             #[cfg(test)]\nstruct N11 { p: u8 }\nfn n12() { q(); }\n\
             #[cfg(not(test))]\nfn n13() { r(); }\n\
             #[cfg(any(test, feature = \"mock\"))]\nfn n14() { s(); }\n\
             #[cfg(not(not(test)))]\nfn t15() { u(); }\n\
             #[cfg(any(all(test, unix), all(test, windows)))]\nfn t16() { v(); }\n\
             #[cfg(all(not(test), unix))]\nfn n17() { w(); }\n";
    let ranges = ignored_ranges(text, false);
    let bodies: Vec<&str> = ranges.iter().map(|r| text[r.clone()].trim()).collect();
    assert_eq!(
        bodies,
        [
            "a();",
            "b();",
            "fn c() {}",
            "fn d() {}",
            "#[test] fn e() {}",
            "f();",
            "u();",
            "v();"
        ]
    );
    // The scan marks the same functions as tests (and, as it lists functions
    // written inside `mac!( .. )`, that one).
    let tests: Vec<&str> = scan(text)
        .items
        .iter()
        .filter(|f| f.test && f.module.is_empty() && f.self_type.is_none())
        .map(|f| f.name)
        .collect();
    assert_eq!(tests, ["t1", "t2", "n8", "t15", "t16"]);
    // Tests included: nothing to blank.
    assert!(ignored_ranges(text, true).is_empty());
    let blanked = blank(text, &ranges);
    assert_eq!(blanked.lines().count(), text.lines().count());
    assert!(blanked.contains("fn t1() {      }\n"));
    // Doc comments, outer and inner, line and block, in order with test bodies.
    let text = "//! crate\n/// f\n//// not\nfn f() {}\n/** g */ /**/ /*** no */ /*! i */\n\
                    #[test]\nfn t() {\n/// inside\n}\n// plain\n";
    let docs: Vec<&str> = ignored_ranges(text, false)
        .into_iter()
        .map(|r| &text[r])
        .collect();
    assert_eq!(
        docs,
        [
            "//! crate",
            "/// f",
            "/** g */",
            "/*! i */",
            "\n/// inside\n"
        ]
    );
    // Columns count characters: a blanked `é` is one space.
    let text = "#[test] fn t() { \"é\"; }\nfn f() {}";
    assert_eq!(
        blank(text, &ignored_ranges(text, false)),
        "#[test] fn t() {      }\nfn f() {}"
    );
}

#[test]
fn test_modules_declared_out_of_line() {
    let text = "#[cfg(test)]\nmod tests;\n#[cfg(all(test, feature = \"x\"))]\npub(crate) mod fakes;\n\
                    #[cfg(test)]\n#[path = \"t.rs\"]\nmod elsewhere;\nmod plain;\n\
                    #[cfg(test)]\nmod inline { #[cfg(test)] mod nested; }\n\
                    #[cfg(feature = \"test\")]\nmod featured;\n#[cfg(test)]\nuse x::y;\nmod after;\n";
    assert_eq!(test_module_decls(text), ["tests", "fakes"]);
}

#[test]
fn raw_identifiers_are_not_raw_strings() {
    let s = scan(
        "impl A { fn e(&self) -> X { X { r#type: k, br#x: 1, s: r#\"a\"#, t: br##\"b\"## } } }\n\
             fn after() {}\n",
    );
    let names: Vec<&str> = s.items.iter().map(|f| f.name).collect();
    assert_eq!(names, ["e", "after"]);
    assert!(s.idents.contains("type"));
}

#[test]
fn impl_types_look_through_wrappers_as_the_front_end_does() {
    let s = scan(
        "impl<E> Tr for Option<&Arc<crate::x::Ref<E>>> { fn a(&self) {} }\n\
             impl Tr for dyn Other { fn b(&self) {} }\n\
             impl<'a> Cow<'a, Repo> { fn c(&self) {} }\n\
             impl Tr for (A, B) { fn d(&self) {} }\n\
             impl<T> Tr for Vec<T> where T: Fn() -> u8 { fn e(&self) {} }\n",
    );
    let items: Vec<(&str, Option<&str>)> = s.items.iter().map(|f| (f.name, f.self_type)).collect();
    assert_eq!(
        items,
        [
            ("a", Some("Ref")),
            ("b", None),
            ("c", Some("Repo")),
            ("d", None),
            ("e", Some("T"))
        ]
    );
}

#[test]
fn garbage_does_not_panic() {
    for text in [
        "\"unterminated",
        "r#\"x",
        "'",
        "/* open",
        "b'",
        "é'",
        "r#",
        "'\\",
    ] {
        let _ = scan(text);
    }
}
