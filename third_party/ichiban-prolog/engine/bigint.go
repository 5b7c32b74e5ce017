package engine

// rlmpl patch (PATCHES.md, "Unbounded integers"): integers past 64 bits.

import (
	"io"
	"math/big"
)

// BigInt is an integer outside the range of Integer (int64). Every
// integer that fits in an int64 is an Integer: arithmetic normalizes its
// results, so that a value has one representation and == on Integer stays
// the test of equality for small integers.
type BigInt struct {
	v big.Int
}

func (*BigInt) number() {}

// NewBigInt returns n as an Integer when it fits in int64, else as a
// *BigInt (a copy of n).
func NewBigInt(n *big.Int) Number {
	if n.IsInt64() {
		return Integer(n.Int64())
	}
	var b BigInt
	b.v.Set(n)
	return &b
}

// Big returns a copy of the integer's value.
func (b *BigInt) Big() *big.Int {
	return new(big.Int).Set(&b.v)
}

func (b *BigInt) String() string { return b.v.String() }

// WriteTerm outputs the integer in decimal.
func (b *BigInt) WriteTerm(w io.Writer, opts *WriteOptions, _ *Env) error {
	ew := asErrWriter(w)
	neg := b.v.Sign() < 0
	openClose := opts.left.name == atomMinus && opts.left.specifier.class() == operatorClassPrefix && !neg
	if openClose {
		_, _ = ew.Write([]byte(" ("))
	} else if opts.left != (operator{}) && (letterDigit(opts.left.name) || (neg && graphic(opts.left.name))) {
		_, _ = ew.Write([]byte(" "))
	}
	_, _ = ew.Write([]byte(b.v.String()))
	if openClose {
		_, _ = ew.Write([]byte(")"))
	}
	if !openClose && opts.right != (operator{}) && (letterDigit(opts.right.name) || (needQuoted(opts.right.name) && opts.right.name != atomComma && opts.right.name != atomBar)) {
		_, _ = ew.Write([]byte(" "))
	}
	return ew.err
}

// Compare orders integers by value, after variables and floats.
func (b *BigInt) Compare(t Term, env *Env) int {
	switch t := env.Resolve(t).(type) {
	case *Var, Float:
		return 1
	case Integer:
		return b.v.Sign() // a BigInt is beyond every Integer
	case *BigInt:
		return b.v.Cmp(&t.v)
	default:
		return -1
	}
}

// compareNumbers compares x and y by value (=:=, <, ...): -1, 0 or 1.
func compareNumbers(x, y Number) int {
	switch x := x.(type) {
	case Integer:
		switch y := y.(type) {
		case Integer:
			return cmpOrdered(x, y)
		case Float:
			return cmpIntFloat(big.NewInt(int64(x)), float64(y))
		case *BigInt:
			return -y.v.Sign()
		}
	case Float:
		switch y := y.(type) {
		case Integer:
			return -cmpIntFloat(big.NewInt(int64(y)), float64(x))
		case Float:
			return cmpOrdered(x, y)
		case *BigInt:
			return -cmpIntFloat(&y.v, float64(x))
		}
	case *BigInt:
		switch y := y.(type) {
		case Integer:
			return x.v.Sign()
		case Float:
			return cmpIntFloat(&x.v, float64(y))
		case *BigInt:
			return x.v.Cmp(&y.v)
		}
	}
	return 0
}

func cmpOrdered[T Integer | Float](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// cmpIntFloat compares integer i with float f exactly (no rounding of i).
func cmpIntFloat(i *big.Int, f float64) int {
	if f != f { // NaN
		return 0
	}
	if i.IsInt64() && i.Int64() > -(1<<53) && i.Int64() < 1<<53 {
		return cmpOrdered(Float(float64(i.Int64())), Float(f))
	}
	bf := new(big.Float).SetInt(i)
	return bf.Cmp(big.NewFloat(f))
}
