use super::*;

#[test]
fn every_known_role_is_given_by_a_pack() {
    assert_eq!(Apis::builtin().missing_roles(), Vec::<&str>::new());
    let mut apis = Apis::builtin();
    apis.types.clear();
    assert!(apis.missing_roles().contains(&"kafka.consumer"));
}

/// A role a call requires of its receiver or argument is one some type or call
/// gives: a role renamed in one place only would never match.
#[test]
fn every_role_a_pack_asks_for_is_given() {
    let apis = Apis::builtin();
    let given: std::collections::HashSet<&str> = apis
        .types
        .values()
        .flatten()
        .map(|t| t.role.as_str())
        .chain(
            [&apis.methods, &apis.paths, &apis.macros]
                .iter()
                .flat_map(|m| m.values().flatten())
                .filter_map(|c| c.returns.as_deref()),
        )
        .collect();
    let mut asked: Vec<(String, String)> = [&apis.methods, &apis.paths, &apis.macros]
        .iter()
        .flat_map(|m| m.values().flatten())
        .flat_map(|c| {
            c.on.iter()
                .chain(&c.arg0_role)
                .filter(|r| !matches!(r.as_str(), "*" | "?"))
                .filter(|r| !given.contains(r.as_str()))
                .map(|r| (c.origin.clone(), r.clone()))
        })
        .collect();
    asked.sort();
    asked.dedup();
    assert_eq!(asked, Vec::<(String, String)>::new());
}

/// A pack whose calls receive messages says which broker they come from (the
/// inventory and the checklist ask of Kafka and RabbitMQ consumers apart).
#[test]
fn every_receiving_pack_names_its_broker() {
    for (name, text) in PACKS {
        let pack: Pack = toml::from_str(text).unwrap();
        let receives = pack.calls.iter().any(|c| c.event == ApiEvent::Receive);
        assert_eq!(receives, pack.broker.is_some(), "rules/{name}");
    }
    let apis = Apis::builtin();
    assert_eq!(apis.broker_of(Some("rdkafka")), Some(Broker::Kafka));
    assert_eq!(apis.broker_of(Some("rdkafka or lapin")), None);
    let mut rabbitmq: Vec<_> = apis.packs_of(Broker::Rabbitmq).collect();
    rabbitmq.sort();
    assert_eq!(rabbitmq, ["amiquip", "lapin"]);
}

#[test]
fn builtin_packs_load() {
    let apis = Apis::builtin();
    assert!(apis.methods.contains_key("commit_message"));
    assert!(apis.paths.contains_key("query"));
    assert!(apis.macros.contains_key("query"));
    assert!(apis.type_specs("StreamConsumer")[0].role == "kafka.consumer");
}

/// Record builders and ack-off options are the packs' (`[topics] records`,
/// `[[auto_ack]]`): what the lowering and the prefilter read of them.
#[test]
fn records_and_auto_ack_options_come_from_the_packs() {
    let t = TopicSpec {
        records: vec!["kafka::Record::to".into()],
        ..TopicSpec::default()
    };
    let segs = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    assert_eq!(t.record_type(&segs("Record::to")), Some("Record"));
    assert_eq!(t.record_type(&segs("x::Record::to")), Some("Record"));
    assert_eq!(t.record_type(&segs("Record::new")), None);
    assert_eq!(t.record_type(&segs("to")), None);
    assert!(t.is_record_type("Record") && !t.is_record_type("to"));
    let pack: Pack = toml::from_str(
        "library = \"x\"\n[[auto_ack]]\nstruct = \"Opts\"\nfield = \"no_ack\"\nvalue = \"true\"\n\
         [[auto_ack]]\nfield = \"policy\"\nvalue = \"m::Policy::Off\"\n",
    )
    .unwrap();
    let names: Vec<Vec<&str>> = pack.auto_ack.iter().map(|a| a.names().collect()).collect();
    assert_eq!(names, [vec!["Opts"], vec!["Policy"]]);
    let builtin = Apis::builtin();
    assert!(builtin.auto_ack.len() >= 2 && !builtin.topics.records.is_empty());
    assert!(builtin.std.aliases.contains("clone") && builtin.std.methods.contains("len"));
}

/// `binds` fits its call, a `[[ttls]]` unit its form, a `verb` an ORM call, a
/// `config` a method; the packs' retention knowledge loads.
#[test]
fn binds_and_ttls_are_checked_at_load() {
    let check = |text: &str| {
        toml::from_str::<Pack>(&format!("library = \"x\"\n{text}"))
            .map_err(|e| e.to_string())
            .and_then(|p| p.check())
    };
    let call = |keys: &str| check(&format!("[[calls]]\nevent = \"write\"\n{keys}"));
    assert!(call("methods = [\"q\"]\nsql = \"arg0\"\nbinds = \"arg1\"").is_ok());
    assert!(call("methods = [\"q\"]\nbinds = \"arg1\"").is_err());
    assert!(call("paths = [\"q\"]\nsql = \"arg0\"\nbinds = \"arg1\"").is_err());
    assert!(call("methods = [\"q\"]\nsql = \"arg0\"\nbinds = \"bind_calls\"").is_err());
    assert!(call("macros = [\"q\"]\nsql = \"first_str\"\nbinds = \"after_sql\"").is_ok());
    assert!(call("macros = [\"q\"]\nsql = \"arg0\"\nbinds = \"after_sql\"").is_err());
    assert!(call("methods = [\"q\"]\nsql = \"arg0\"\nbinds = \"later\"").is_err());
    let ttl = |keys: &str| check(&format!("[[ttls]]\nmethods = [\"t\"]\n{keys}"));
    assert!(ttl("form = \"key_ttl\"\nunit = \"seconds\"").is_ok());
    assert!(ttl("form = \"key_ttl\"").is_err());
    assert!(ttl("form = \"claim\"\nunit = \"millis\"").is_err());
    assert!(ttl("form = \"claim\"").is_ok());
    assert!(ttl("form = \"ttl\"").is_err());
    assert!(check("[topics]\ncreate = [\"T::new\"]\nremove = []").is_err());
    assert!(call("methods = [\"m\"]\non = [\"*\"]\nsql = \"method\"\nverb = \"SAVE\"").is_ok());
    assert!(call("methods = [\"m\"]\non = [\"*\"]\nsql = \"method\"").is_err());
    assert!(call("methods = [\"m\"]\nsql = \"method\"\nverb = \"MERGE\"").is_err());
    assert!(call("methods = [\"m\"]\nsql = \"arg0\"\nverb = \"INSERT\"").is_err());
    assert!(call("methods = [\"m\"]\non = [\"r\"]\nconfig = \"keep\"").is_ok());
    assert!(call("paths = [\"m\"]\nconfig = \"keep\"").is_err());
    assert!(call("methods = [\"m\"]\non = [\"r\"]\nconfig = \"drop\"").is_err());
    assert!(call("methods = [\"m\"]\nsql = \"dsl_select\"").is_ok());
    assert!(call("methods = [\"m\"]\nsql = \"diesel_select\"").is_err());
    assert!(check("[chain_idents]\nX = \"upsert\"").is_ok());
    assert!(check("[chain_idents]\nX = \"assignments\"").is_err());
    assert!(check("[chain_verbs]\ndelete = \"DELETE\"").is_ok());
    assert!(check("[chain_verbs]\nmerge = \"MERGE\"").is_err());
    let word = |keys: &str| check(&format!("[[arg_words]]\nwords = [\"W\"]\n{keys}"));
    assert!(word("means = \"expires\"\nunit = \"millis\"").is_ok());
    assert!(word("means = \"only_if_absent\"").is_ok());
    assert!(word("means = \"only_if_absent\"\nunit = \"seconds\"").is_err());
    assert!(word("means = \"forever\"").is_err());

    let apis = Apis::builtin();
    assert_eq!(apis.ttls["pexpire"].form, TtlForm::KeyTtl);
    assert_eq!(apis.ttls["pexpire"].unit, Some(TtlUnit::Millis));
    assert_eq!(apis.ttl_modules, ["fred", "redis"]);
    assert_eq!(apis.topics.create, ["NewTopic::new"]);
    assert!(apis.paths["sql_query"]
        .iter()
        .any(|c| c.binds == Some(Binds::BindCalls)));
}

#[test]
fn user_entries_become_methods_and_paths() {
    let mut user = ApiConfig::default();
    user.lists
        .insert("ack".into(), vec!["crate::queue::Queue::done".into()]);
    user.lists
        .insert("commit".into(), vec!["crate::db::finish_uow".into()]);
    let apis = Apis::with_user(&user).unwrap();
    let done = &apis.methods["done"][0];
    assert_eq!(done.event, ApiEvent::Ack);
    assert_eq!(done.on_type.as_deref(), Some("Queue"));
    assert_eq!(apis.paths["finish_uow"][0].paths, vec!["db::finish_uow"]);
}

#[test]
fn unknown_user_key_is_an_error() {
    let mut user = ApiConfig::default();
    user.lists.insert("acknowledge".into(), vec!["x".into()]);
    assert!(Apis::with_user(&user).is_err());
}
