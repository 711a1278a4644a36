//! Dependency order: a topological sort that breaks ties by registration order, and the
//! cycle that prevents one.

use std::collections::BTreeSet;

/// The nodes (`deps[i]`: the nodes node `i` depends on) in an order where every node comes
/// after the nodes it depends on; among the nodes free to come next, the one registered
/// first comes first, so the order is the same on every run.
///
/// If the nodes depend on each other in a cycle, returns it instead, from its node
/// registered first: each node followed by one it depends on, back to the first
/// (`[a, b, a]`: `a` depends on `b` and `b` on `a`).
pub(crate) fn dependency_order(deps: &[Vec<usize>]) -> Result<Vec<usize>, Vec<usize>> {
    let mut waiting_on: Vec<BTreeSet<usize>> =
        deps.iter().map(|d| d.iter().copied().collect()).collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); deps.len()];
    for (node, on) in waiting_on.iter().enumerate() {
        for &dep in on {
            dependents[dep].push(node);
        }
    }
    let mut ready: BTreeSet<usize> = (0..deps.len())
        .filter(|&node| waiting_on[node].is_empty())
        .collect();
    let mut order = Vec::with_capacity(deps.len());
    while let Some(node) = ready.pop_first() {
        order.push(node);
        for &dependent in &dependents[node] {
            waiting_on[dependent].remove(&node);
            if waiting_on[dependent].is_empty() {
                ready.insert(dependent);
            }
        }
    }
    if order.len() == deps.len() {
        return Ok(order);
    }
    // Every node left waits on another node left: follow those edges until one repeats.
    let Some(start) = (0..deps.len()).find(|node| !waiting_on[*node].is_empty()) else {
        return Ok(order); // unreachable: some node is left
    };
    let mut path = vec![start];
    let mut node = start;
    loop {
        let Some(&next) = waiting_on[node].first() else {
            return Err(path); // unreachable: every node left waits on one
        };
        if let Some(at) = path.iter().position(|&seen| seen == next) {
            let mut cycle = path.split_off(at);
            let first = cycle
                .iter()
                .enumerate()
                .min_by_key(|(_, node)| **node)
                .map_or(0, |(position, _)| position);
            cycle.rotate_left(first);
            if let Some(&head) = cycle.first() {
                cycle.push(head);
            }
            return Err(cycle);
        }
        path.push(next);
        node = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependencies_come_first_and_ties_keep_registration_order() {
        // 0 depends on 2, 1 on nothing, 2 on 1, 3 on nothing.
        assert_eq!(
            dependency_order(&[vec![2], vec![], vec![1], vec![]]),
            Ok(vec![1, 2, 0, 3])
        );
        assert_eq!(
            dependency_order(&[vec![], vec![], vec![]]),
            Ok(vec![0, 1, 2])
        );
        assert_eq!(dependency_order(&[vec![1, 1], vec![]]), Ok(vec![1, 0]));
        assert_eq!(dependency_order(&[]), Ok(vec![]));
    }

    #[test]
    fn a_cycle_is_returned_from_its_node_registered_first() {
        // 0 -> 3 (outside the cycle), 1 -> 2 -> 3 -> 1.
        assert_eq!(
            dependency_order(&[vec![3], vec![2], vec![3], vec![1]]),
            Err(vec![1, 2, 3, 1])
        );
        assert_eq!(
            dependency_order(&[vec![0]]),
            Err(vec![0, 0]),
            "self-dependency"
        );
        assert_eq!(
            dependency_order(&[vec![], vec![2], vec![1]]),
            Err(vec![1, 2, 1])
        );
    }
}
