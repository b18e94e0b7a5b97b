//! What a declared type tells the front end: the role the API packs give it, the
//! crate type it names (looking through `Arc`, `Option`, `&` and other wrappers),
//! whether it lies outside the analyzed code, and the traits bounding a generic
//! parameter.

use std::collections::HashSet;

use syn::punctuated::Punctuated;
use syn::Token;

use super::{glob_brings, stored, CrateIndex, UseMap};
use crate::apis::{builtin_std, Apis};

/// What the front end knows about a declared type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TypeInfo {
    /// Role from the API packs (`db.tx`, `kafka.consumer`).
    pub role: Option<String>,
    /// Name of a type defined in this crate (`OrderRepo`), for method and field lookup.
    pub crate_type: Option<String>,
    /// The value's own type lies outside the analyzed code (`String`, `u64`, a
    /// library's type), or is a collection (`Vec<Repo>`, whose `crate_type` is its
    /// element's): its methods are never the crate's (docs/what-is-analyzed.md, call resolution).
    pub outside: bool,
    /// A struct field of unknown type that is the struct's generic parameter at this
    /// position (`mailer: T` in `struct Notifier<T>`): an `impl` block's bounds on it
    /// type it while that block's methods are lowered.
    pub generic: Option<usize>,
    /// For an in-process channel's sender or receiver (`Receiver<Job>`, a `chan.rx`
    /// or `chan.tx` role), the name of the element type (`Job`): which sends pair
    /// with which receiving loops when the value flow is not followed.
    pub elem: Option<String>,
    /// A struct field's name as serde writes it when renamed (`#[serde(rename =
    /// "_id")] id: String`: `_id`); set only on the fields the index records.
    pub serialized: Option<String>,
    /// A struct field typed `Option<..>`: it may be left unset (`None`).
    pub optional: bool,
}

impl TypeInfo {
    /// A value of an API role (or of nothing known).
    pub fn of_role(role: Option<String>) -> TypeInfo {
        TypeInfo {
            role,
            ..TypeInfo::default()
        }
    }
}

/// Whether `ty`, looked through its wrappers, is a collection at some level.
fn is_collection(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Reference(r) => is_collection(&r.elem),
        syn::Type::Paren(p) => is_collection(&p.elem),
        syn::Type::Group(g) => is_collection(&g.elem),
        syn::Type::Slice(_) | syn::Type::Array(_) => true,
        syn::Type::Path(p) => {
            let Some(last) = p.path.segments.last() else {
                return false;
            };
            let name = last.ident.to_string();
            if builtin_std().collections.contains(&name) {
                return true;
            }
            if !is_wrapper(&name) {
                return false;
            }
            match &last.arguments {
                syn::PathArguments::AngleBracketed(args) => args
                    .args
                    .iter()
                    .any(|a| matches!(a, syn::GenericArgument::Type(t) if is_collection(t))),
                _ => false,
            }
        }
        _ => false,
    }
}

/// The name of a type, wrappers and references removed (`&mut Worker` -> `Worker`).
pub(crate) fn type_name(ty: &syn::Type) -> Option<String> {
    innermost(ty).and_then(|p| p.segments.last().map(|s| s.ident.to_string()))
}

/// A type the front end looks through to its first type argument (`Arc<Repo>`). A
/// pool's connection guard is not one: the packs give it a role of its own.
pub(crate) fn is_wrapper(name: &str) -> bool {
    let std = builtin_std();
    std.wrappers.contains(name)
        || std
            .wrapper_suffixes
            .iter()
            .any(|s| name.ends_with(s.as_str()))
}

pub(crate) fn innermost(ty: &syn::Type) -> Option<&syn::Path> {
    match ty {
        syn::Type::Reference(r) => innermost(&r.elem),
        syn::Type::Paren(p) => innermost(&p.elem),
        syn::Type::Group(g) => innermost(&g.elem),
        syn::Type::Path(p) => {
            let last = p.path.segments.last()?;
            let name = last.ident.to_string();
            if let syn::PathArguments::AngleBracketed(args) = &last.arguments {
                let mut types = args.args.iter().filter_map(|a| match a {
                    syn::GenericArgument::Type(t) => Some(t),
                    _ => None,
                });
                if is_wrapper(&name) {
                    if let Some(t) = types.next() {
                        return innermost(t);
                    }
                } else if builtin_std().collections.contains(&name) {
                    // A collection holds its elements; a map (`HashMap<K, V>`), its
                    // values (a dispatch table's handlers).
                    let skip = usize::from(name.ends_with("Map"));
                    if let Some(t) = types.nth(skip) {
                        return innermost(t);
                    }
                }
            }
            Some(&p.path)
        }
        // `dyn Bus + Send`, `impl Bus`: the first trait bound that is not a marker
        // (calls on it go to the trait's implementations).
        syn::Type::TraitObject(t) => trait_bound_path(&t.bounds),
        syn::Type::ImplTrait(t) => trait_bound_path(&t.bounds),
        _ => None,
    }
}

/// Whether `ty` holds callables: a closure or function pointer type (`Box<dyn Fn(..)>`,
/// `fn(..)`, `impl FnMut(..)`), also in a wrapper or a collection (`Vec<Hook>`,
/// `HashMap<String, Box<dyn Fn(..) -> BoxFuture<..>>>`) and through the crate's aliases.
pub(crate) fn is_callable(index: &CrateIndex, ty: &syn::Type) -> bool {
    callable_at(index, ty, 0)
}

fn callable_at(index: &CrateIndex, ty: &syn::Type, depth: u8) -> bool {
    let fn_bound = |bounds: &Punctuated<syn::TypeParamBound, Token![+]>| {
        trait_bound_path(bounds)
            .and_then(|p| p.segments.last())
            .is_some_and(|s| matches!(s.ident.to_string().as_str(), "Fn" | "FnMut" | "FnOnce"))
    };
    match ty {
        syn::Type::BareFn(_) => true,
        syn::Type::TraitObject(t) => fn_bound(&t.bounds),
        syn::Type::ImplTrait(t) => fn_bound(&t.bounds),
        syn::Type::Reference(r) => callable_at(index, &r.elem, depth),
        syn::Type::Paren(p) => callable_at(index, &p.elem, depth),
        syn::Type::Group(g) => callable_at(index, &g.elem, depth),
        syn::Type::Slice(s) => callable_at(index, &s.elem, depth),
        syn::Type::Array(a) => callable_at(index, &a.elem, depth),
        syn::Type::Path(p) if depth < 4 => {
            let Some(last) = p.path.segments.last() else {
                return false;
            };
            let name = last.ident.to_string();
            match &last.arguments {
                syn::PathArguments::None if p.path.segments.len() == 1 => index
                    .aliases
                    .get(&name)
                    .and_then(|text| syn::parse_str::<syn::Type>(text).ok())
                    .is_some_and(|t| callable_at(index, &t, depth + 1)),
                syn::PathArguments::AngleBracketed(args)
                    if is_wrapper(&name) || builtin_std().collections.contains(&name) =>
                {
                    // A map's values; a wrapper's or a sequence's elements.
                    let types: Vec<&syn::Type> = args
                        .args
                        .iter()
                        .filter_map(|a| match a {
                            syn::GenericArgument::Type(t) => Some(t),
                            _ => None,
                        })
                        .collect();
                    let at = usize::from(name.ends_with("Map") && types.len() >= 2);
                    types
                        .get(at)
                        .is_some_and(|t| callable_at(index, t, depth + 1))
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// The slot of the fn-pointer alias a collection of tuples holds (`[(&str, HandlerFn); 2]`).
fn fn_alias_in_tuples(index: &CrateIndex, ty: &syn::Type) -> Option<String> {
    let elem = match ty {
        syn::Type::Reference(r) => return fn_alias_in_tuples(index, &r.elem),
        syn::Type::Paren(p) => return fn_alias_in_tuples(index, &p.elem),
        syn::Type::Array(a) => &*a.elem,
        syn::Type::Slice(s) => &*s.elem,
        syn::Type::Path(p) => {
            let last = p.path.segments.last()?;
            if !builtin_std().collections.contains(&last.ident.to_string()) {
                return None;
            }
            match &last.arguments {
                syn::PathArguments::AngleBracketed(a) => a.args.iter().find_map(|a| match a {
                    syn::GenericArgument::Type(t) => Some(t),
                    _ => None,
                })?,
                _ => return None,
            }
        }
        _ => return None,
    };
    let syn::Type::Tuple(t) = elem else {
        return None;
    };
    t.elems.iter().find_map(|e| {
        let syn::Type::Path(p) = e else {
            return None;
        };
        let name = p.path.get_ident()?.to_string();
        let text = index.aliases.get(&name)?;
        stored::is_fn_pointer_text(text).then(|| stored::fn_alias_slot(&name))
    })
}

/// The first bound of `bounds` naming a trait other than an auto/marker trait.
pub(crate) fn trait_bound_path<P>(
    bounds: &syn::punctuated::Punctuated<syn::TypeParamBound, P>,
) -> Option<&syn::Path> {
    bounds.iter().find_map(|b| match b {
        syn::TypeParamBound::Trait(t) => {
            let last = t.path.segments.last()?.ident.to_string();
            let marker = matches!(
                last.as_str(),
                "Send"
                    | "Sync"
                    | "Unpin"
                    | "Sized"
                    | "Copy"
                    | "Clone"
                    | "Debug"
                    | "Display"
                    | "Any"
                    | "UnwindSafe"
                    | "RefUnwindSafe"
            ) || matches!(t.modifier, syn::TraitBoundModifier::Maybe(_));
            (!marker).then_some(&t.path)
        }
        _ => None,
    })
}

/// A path's segments as strings (`rdkafka::consumer::StreamConsumer`).
pub(crate) fn segments(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

/// Resolves a path's first segment through the file's `use` imports.
pub(crate) fn resolve_path(uses: &UseMap, segs: &[String]) -> Vec<String> {
    let Some(first) = segs.first() else {
        return Vec::new();
    };
    match uses.get(first) {
        Some(full) => full.iter().chain(segs[1..].iter()).cloned().collect(),
        None => segs.to_vec(),
    }
}

/// Role and crate type of a declared type.
pub(crate) fn type_info(
    apis: &Apis,
    uses: &UseMap,
    index: &CrateIndex,
    ty: &syn::Type,
    self_ty: Option<&str>,
) -> TypeInfo {
    aliased_type_info(apis, uses, index, ty, self_ty, 0)
}

/// `name` is imported into the file from another crate.
fn imported_from_outside(uses: &UseMap, name: &syn::Ident) -> bool {
    uses.get(&name.to_string()).is_some_and(|full| {
        !matches!(
            full.first().map(String::as_str),
            Some("crate" | "self" | "super")
        ) && full.len() >= 2
    })
}

/// [`type_info`], a crate type alias read as the type it names (at most a few deep).
fn aliased_type_info(
    apis: &Apis,
    uses: &UseMap,
    index: &CrateIndex,
    ty: &syn::Type,
    self_ty: Option<&str>,
    depth: u8,
) -> TypeInfo {
    if depth < 4 {
        let alias = innermost(ty)
            .filter(|p| {
                p.segments.len() == 1
                    || matches!(
                        p.segments[0].ident.to_string().as_str(),
                        "crate" | "self" | "super"
                    )
            })
            .and_then(|p| p.segments.last())
            .filter(|s| s.arguments.is_empty() && !imported_from_outside(uses, &s.ident))
            .and_then(|s| {
                Some((
                    s.ident.to_string(),
                    index.aliases.get(&s.ident.to_string())?,
                ))
            });
        // `type HandlerFn = fn(..)`: its values are the slot of the functions stored as
        // one (`stored::fn_alias_slot`).
        if let Some((name, _)) = alias
            .as_ref()
            .filter(|(_, text)| stored::is_fn_pointer_text(text))
        {
            return TypeInfo {
                crate_type: Some(stored::fn_alias_slot(name)),
                outside: true,
                ..TypeInfo::default()
            };
        }
        let alias = alias.and_then(|(_, text)| syn::parse_str::<syn::Type>(text).ok());
        if let Some(aliased) = alias {
            let mut ti = aliased_type_info(apis, uses, index, &aliased, self_ty, depth + 1);
            ti.outside |= is_collection(ty);
            return ti;
        }
    }
    let collection = is_collection(ty);
    // `[(&str, HandlerFn); 2]`, `Vec<(String, HandlerFn)>`: a collection of pairs
    // holding a fn-pointer alias's values is typed by its slot (a tuple pattern over
    // an element keeps it, `Lowerer::bind_pattern`).
    if let Some(slot) = fn_alias_in_tuples(index, ty) {
        return TypeInfo {
            crate_type: Some(slot),
            outside: true,
            ..TypeInfo::default()
        };
    }
    let Some(path) = innermost(ty) else {
        return TypeInfo {
            outside: collection,
            ..TypeInfo::default()
        };
    };
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    if segs.len() == 1 && segs[0] == "Self" {
        return TypeInfo {
            role: None,
            crate_type: self_ty.map(String::from),
            outside: collection,
            generic: None,
            elem: None,
            ..TypeInfo::default()
        };
    }
    let resolved = reexported_type(index, resolve_path(uses, &segs));
    let Some(last) = resolved.last() else {
        return TypeInfo::default();
    };
    // `crate::db::Repo`, `Repo`, or `db::Repo` through a module of this crate (a first
    // segment no API pack names as a crate).
    let external = resolved.len() >= 2
        && apis
            .type_specs(last)
            .iter()
            .any(|spec| spec.crates.iter().any(|c| *c == resolved[0]));
    // A pool generic over its manager (`bb8::Pool<M>`): what it pools decides.
    if let Some(spec) = resolved.first().and_then(|first| {
        apis.type_specs(last)
            .iter()
            .find(|s| s.managed_in.iter().any(|c| c == first))
    }) {
        if let Some(syn::PathArguments::AngleBracketed(args)) =
            path.segments.last().map(|s| &s.arguments)
        {
            let manager = args.args.iter().find_map(|a| match a {
                syn::GenericArgument::Type(t) => innermost(t),
                _ => None,
            });
            if let Some(m) = manager {
                let ms = resolve_path(uses, &segments(m));
                let own = matches!(
                    ms.first().map(String::as_str),
                    Some("crate" | "self" | "super")
                ) || ms.last().is_some_and(|l| index.type_names.contains(l));
                let foreign = ms.iter().any(|seg| {
                    let seg = seg.to_ascii_lowercase();
                    spec.foreign_managers
                        .iter()
                        .any(|f| seg.contains(&f.to_ascii_lowercase()))
                });
                if own || foreign {
                    return TypeInfo::default();
                }
            }
        }
    }
    let local = matches!(
        resolved.first().map(String::as_str),
        Some("crate" | "self" | "super")
    ) || (index.type_names.contains(last) && !external);
    if local {
        return TypeInfo {
            role: None,
            crate_type: Some(last.clone()),
            outside: collection,
            generic: None,
            elem: None,
            ..TypeInfo::default()
        };
    }
    let role = role_of_resolved(apis, uses, &resolved);
    // Known to be another crate's type: a std or primitive name, or a path that
    // resolves into a crate other than this one (`use reqwest::Client`). A lone
    // unknown name may be a generic parameter (`R: Repo`): not known.
    let foreign = builtin_std().types.contains(last)
        || (resolved.len() >= 2 && !matches!(resolved[0].as_str(), "crate" | "self" | "super"));
    let elem = role
        .as_deref()
        .filter(|r| matches!(*r, "chan.rx" | "chan.tx"))
        .and_then(|_| channel_elem(path));
    TypeInfo {
        outside: collection || (role.is_none() && foreign),
        role,
        crate_type: None,
        generic: None,
        elem,
        ..TypeInfo::default()
    }
}

/// A type re-exported under another name (`pub use pg::PgLedger as Ledger;` in a
/// member the code imports from): the path of the type it stands for; `resolved`
/// itself otherwise.
fn reexported_type(index: &CrateIndex, resolved: Vec<String>) -> Vec<String> {
    if resolved.last().is_none_or(|l| index.type_names.contains(l)) {
        return resolved;
    }
    crate::ir::through_reexports(&index.reexports, &resolved)
        .into_iter()
        .find(|p| p.last().is_some_and(|l| index.type_names.contains(l)))
        .unwrap_or(resolved)
}

/// The element type of a channel end's path (`mpsc::Receiver<Job>`: `Job`), looked
/// through wrappers and references.
pub(crate) fn channel_elem(path: &syn::Path) -> Option<String> {
    let syn::PathArguments::AngleBracketed(args) = &path.segments.last()?.arguments else {
        return None;
    };
    args.args.iter().find_map(|a| match a {
        syn::GenericArgument::Type(t) => type_name(t),
        _ => None,
    })
}

/// The role of the type at `resolved`: a path into a pack's crate (and module), or a
/// lone name that is unique to a pack or that a glob import of its crate brings in
/// (`RedisClient` under `use fred::prelude::*;`).
pub(crate) fn role_of_resolved(apis: &Apis, uses: &UseMap, resolved: &[String]) -> Option<String> {
    let last = resolved.last()?;
    for spec in apis.type_specs(last) {
        let ok = if resolved.len() >= 2 {
            (spec.crates.is_empty() || spec.crates.iter().any(|c| *c == resolved[0]))
                && (spec.modules.is_empty()
                    || resolved[..resolved.len() - 1]
                        .iter()
                        .any(|m| spec.modules.contains(m)))
        } else {
            spec.unique || glob_brings(uses, &spec.crates, &spec.modules)
        };
        if ok {
            return Some(spec.role.clone());
        }
    }
    None
}

/// The role of a value a constructor called on the type path `resolved` (the file's
/// imports followed: `aws_sdk_sns::Client` for `Sns` of `use aws_sdk_sns::Client as
/// Sns`) makes: the pack's `[[types]]` entry for the type, as a declared type of
/// that path has it, and whether the path names the type's crate. `None` for a
/// type of the analyzed crate, and for a pool generic over what it pools
/// (`r2d2::Pool::new(manager)`: the manager decides, which a call does not say).
pub(crate) fn constructed_role(
    apis: &Apis,
    uses: &UseMap,
    index: &CrateIndex,
    resolved: &[String],
) -> Option<(String, bool)> {
    let (first, last) = (resolved.first()?, resolved.last()?);
    if matches!(first.as_str(), "crate" | "self" | "super" | "Self") {
        return None;
    }
    let qualified = resolved.len() >= 2;
    if !qualified && index.type_names.contains(last) {
        return None;
    }
    if qualified
        && apis
            .type_specs(last)
            .iter()
            .any(|s| s.managed_in.iter().any(|c| c == first))
    {
        return None;
    }
    Some((role_of_resolved(apis, uses, resolved)?, qualified))
}

/// The name of the generic parameter a parameter's type is (`&S`, `Arc<S>`: `S`).
pub(crate) fn generic_name(ty: &syn::Type) -> Option<String> {
    innermost(ty)
        .filter(|p| p.segments.len() == 1)
        .map(|p| p.segments[0].ident.to_string())
}

/// The trait bounds `generics` (of a function, a struct or an impl) put on the
/// generic parameter that `ty` is, in the parameter list and the `where` clause.
pub(crate) fn generic_bound_paths<'s>(
    generics: &'s syn::Generics,
    ty: &syn::Type,
) -> Vec<&'s syn::Path> {
    let Some(g) = generic_name(ty) else {
        return Vec::new();
    };
    let traits = |bounds: &'s Punctuated<syn::TypeParamBound, Token![+]>| {
        bounds.iter().filter_map(|b| match b {
            syn::TypeParamBound::Trait(t) => Some(&t.path),
            _ => None,
        })
    };
    let mut out: Vec<&syn::Path> = Vec::new();
    for p in generics.type_params().filter(|p| p.ident == g) {
        out.extend(traits(&p.bounds));
    }
    for w in generics.where_clause.iter().flat_map(|w| &w.predicates) {
        if let syn::WherePredicate::Type(pt) = w {
            if generic_name(&pt.bounded_ty).as_deref() == Some(g.as_str()) {
                out.extend(traits(&pt.bounds));
            }
        }
    }
    out
}

/// The crate trait bounding a generic parameter type (`&S`, `Arc<S>`) of `generics`.
pub(crate) fn generic_trait(
    generics: &syn::Generics,
    ty: &syn::Type,
    traits: &HashSet<String>,
) -> Option<String> {
    generic_bound_paths(generics, ty).into_iter().find_map(|p| {
        p.segments
            .last()
            .map(|s| s.ident.to_string())
            .filter(|n| traits.contains(n))
    })
}

/// What a generic parameter type is by its bounds in `generics`: a crate trait (its
/// implementations may be reached), or an API's role (`M: lettre::AsyncTransport`).
pub(crate) fn bounded_generic(
    apis: &Apis,
    uses: &UseMap,
    traits: &HashSet<String>,
    generics: &syn::Generics,
    ty: &syn::Type,
) -> Option<TypeInfo> {
    if let Some(t) = generic_trait(generics, ty, traits) {
        return Some(TypeInfo {
            crate_type: Some(t),
            ..TypeInfo::default()
        });
    }
    generic_bound_paths(generics, ty)
        .into_iter()
        .find_map(|p| role_of_resolved(apis, uses, &resolve_path(uses, &segments(p))))
        .map(|role| TypeInfo::of_role(Some(role)))
}

/// The `i`-th type argument of an `impl` block's self type (`M` in `impl<M> S<M>`).
pub(crate) fn impl_arg(imp: &syn::ItemImpl, i: usize) -> Option<&syn::Type> {
    let syn::Type::Path(p) = &*imp.self_ty else {
        return None;
    };
    let syn::PathArguments::AngleBracketed(args) = &p.path.segments.last()?.arguments else {
        return None;
    };
    args.args
        .iter()
        .filter_map(|a| match a {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .nth(i)
}

/// The name serde writes a struct field under when its attributes rename it:
/// `#[serde(rename = "_id")]`, or `#[serde(rename(serialize = "_id"))]`.
pub(super) fn serde_rename(attrs: &[syn::Attribute]) -> Option<String> {
    use proc_macro2::TokenTree;
    // `name = "text"` at the start of `tokens`.
    fn assigned(tokens: &[TokenTree], name: &str) -> Option<String> {
        match tokens {
            [TokenTree::Ident(i), TokenTree::Punct(p), TokenTree::Literal(l), ..]
                if i == name && p.as_char() == '=' =>
            {
                match syn::parse_str::<syn::LitStr>(&l.to_string()) {
                    Ok(s) => Some(s.value()),
                    Err(_) => None,
                }
            }
            _ => None,
        }
    }
    attrs
        .iter()
        .filter(|a| a.path().is_ident("serde"))
        .filter_map(|a| a.meta.require_list().ok())
        .find_map(|list| {
            let tokens: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
            (0..tokens.len()).find_map(|i| {
                if let Some(s) = assigned(&tokens[i..], "rename") {
                    return Some(s);
                }
                match &tokens[i..] {
                    [TokenTree::Ident(r), TokenTree::Group(g), ..] if r == "rename" => {
                        let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                        (0..inner.len()).find_map(|j| assigned(&inner[j..], "serialize"))
                    }
                    _ => None,
                }
            })
        })
}

/// Whether `ty` is an `Option<..>` (a field that may be left unset).
pub(super) fn is_option(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Option"),
        syn::Type::Group(g) => is_option(&g.elem),
        syn::Type::Paren(p) => is_option(&p.elem),
        _ => false,
    }
}
