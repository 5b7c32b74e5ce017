// Package solver is the pack optimizer: a multiple-choice knapsack with
// admissibility constraints, solved to proven optimality over gini.
package solver
