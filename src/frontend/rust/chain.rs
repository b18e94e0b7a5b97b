//! Walking an expression's call chain inward, from its outermost step: `?`,
//! `.await`, parentheses and the receivers of method calls
//! (`client.batch().send().await?` yields the whole, `client.batch().send().await`,
//! `client.batch().send()`, `client.batch()`, `client`).

use syn::Expr;

/// The links of `e`'s chain, outermost first, ending at the first expression that
/// is none of `?`, `.await`, parentheses or a method call (yielded last).
pub(crate) fn links(e: &Expr) -> impl Iterator<Item = &Expr> {
    std::iter::successors(Some(e), |e| match e {
        Expr::Try(t) => Some(&*t.expr),
        Expr::Await(a) => Some(&*a.base),
        Expr::Paren(p) => Some(&*p.expr),
        Expr::MethodCall(mc) => Some(&*mc.receiver),
        _ => None,
    })
}

/// `e` without its outer `?`, `.await` and parentheses: the value it settles.
pub(crate) fn settled(mut e: &Expr) -> &Expr {
    loop {
        e = match e {
            Expr::Try(t) => &t.expr,
            Expr::Await(a) => &a.base,
            Expr::Paren(p) => &p.expr,
            _ => return e,
        };
    }
}

/// Whether the chain `e` awaits anywhere along it.
pub(crate) fn awaits(e: &Expr) -> bool {
    links(e).any(|l| matches!(l, Expr::Await(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expr(s: &str) -> Expr {
        syn::parse_str(s).unwrap()
    }

    #[test]
    fn links_walk_inward_to_the_root() {
        let e = expr("(client.batch().send().await?).len()");
        let roots: Vec<String> = links(&e)
            .map(|l| quote::quote!(#l).to_string().replace(' ', ""))
            .collect();
        assert_eq!(roots.last().map(String::as_str), Some("client"));
        assert_eq!(roots.len(), 7);
        assert!(awaits(&e));
        assert!(!awaits(&expr("client.batch().send()?")));
        assert!(matches!(
            settled(&expr("(a.b().await)?")),
            Expr::MethodCall(_)
        ));
    }
}
