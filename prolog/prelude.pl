/** <module> Compatibility prelude

SWI-Prolog predicates that ichiban lacks, with SWI semantics.
*/
