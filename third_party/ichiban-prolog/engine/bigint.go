package engine

// rlmpl patch (PATCHES.md, "Unbounded integers"): integers past 64 bits.

import (
	"errors"
	"io"
	"math"
	"math/big"
	"math/bits"
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

// Arithmetic on big integers. Each integer-capable evaluable functor of
// number.go is wrapped (init below): its int64 code runs as before, and
// when an operand is a *BigInt, or the int64 result overflows
// (int_overflow), the operation runs on big.Int and the result is
// normalized. A float operand makes a big operand a float, as for an
// Integer.

// maxBigBits bounds the size of a computed integer (about 1 MB), so that
// 2^(2^40) is a resource error instead of the machine's end.
const maxBigBits = 1 << 23

func init() {
	binaryFunctors[atomGcd] = gcd
	unaryFunctors[atomMsb] = msb
	binInt := func(name Atom, f func(x, y *big.Int) (Number, error)) {
		binaryFunctors[name] = bigBinary(binaryFunctors[name], f, true)
	}
	binNum := func(name Atom, f func(x, y *big.Int) (Number, error)) {
		binaryFunctors[name] = bigBinary(binaryFunctors[name], f, false)
	}
	binNum(atomPlus, func(x, y *big.Int) (Number, error) { return bigResult(new(big.Int).Add(x, y)) })
	binNum(atomMinus, func(x, y *big.Int) (Number, error) { return bigResult(new(big.Int).Sub(x, y)) })
	binNum(atomAsterisk, func(x, y *big.Int) (Number, error) {
		if x.BitLen()+y.BitLen() > maxBigBits {
			return nil, errBigTooLarge
		}
		return bigResult(new(big.Int).Mul(x, y))
	})
	binInt(atomSlashSlash, func(x, y *big.Int) (Number, error) {
		if y.Sign() == 0 {
			return nil, exceptionalValueZeroDivisor
		}
		return bigResult(new(big.Int).Quo(x, y))
	})
	binInt(atomRem, func(x, y *big.Int) (Number, error) {
		if y.Sign() == 0 {
			return nil, exceptionalValueZeroDivisor
		}
		return bigResult(new(big.Int).Rem(x, y))
	})
	binInt(atomMod, func(x, y *big.Int) (Number, error) {
		if y.Sign() == 0 {
			return nil, exceptionalValueZeroDivisor
		}
		m := new(big.Int).Rem(x, y)
		if m.Sign() != 0 && m.Sign() != y.Sign() {
			m.Add(m, y)
		}
		return bigResult(m)
	})
	binInt(atomDiv, func(x, y *big.Int) (Number, error) {
		if y.Sign() == 0 {
			return nil, exceptionalValueZeroDivisor
		}
		q, r := new(big.Int).QuoRem(x, y, new(big.Int))
		if r.Sign() != 0 && r.Sign() != y.Sign() {
			q.Sub(q, big.NewInt(1))
		}
		return bigResult(q)
	})
	binNum(atomSlash, func(x, y *big.Int) (Number, error) {
		if y.Sign() == 0 {
			return nil, exceptionalValueZeroDivisor
		}
		return floatResult(new(big.Float).Quo(new(big.Float).SetInt(x), new(big.Float).SetInt(y)))
	})
	binInt(atomBitwiseAnd, func(x, y *big.Int) (Number, error) { return bigResult(new(big.Int).And(x, y)) })
	binInt(atomBitwiseOr, func(x, y *big.Int) (Number, error) { return bigResult(new(big.Int).Or(x, y)) })
	binInt(atomXor, func(x, y *big.Int) (Number, error) { return bigResult(new(big.Int).Xor(x, y)) })
	binInt(atomBitwiseLeftShift, func(x, y *big.Int) (Number, error) { return bigShift(x, y, 1) })
	binInt(atomBitwiseRightShift, func(x, y *big.Int) (Number, error) { return bigShift(x, y, -1) })
	binInt(atomGcd, func(x, y *big.Int) (Number, error) {
		return bigResult(new(big.Int).GCD(nil, nil, new(big.Int).Abs(x), new(big.Int).Abs(y)))
	})
	binNum(atomMax, func(x, y *big.Int) (Number, error) {
		if x.Cmp(y) < 0 {
			return bigResult(y)
		}
		return bigResult(x)
	})
	binNum(atomMin, func(x, y *big.Int) (Number, error) {
		if x.Cmp(y) > 0 {
			return bigResult(y)
		}
		return bigResult(x)
	})
	binNum(atomCaret, bigPower)
	// The functors that are float functions of their arguments take a big
	// integer as a float.
	for _, name := range []Atom{atomAsteriskAsterisk, atomAtan2} {
		binNum(name, nil)
	}

	unInt := func(name Atom, f func(x *big.Int) (Number, error)) {
		unaryFunctors[name] = bigUnary(unaryFunctors[name], f)
	}
	unInt(atomMinus, func(x *big.Int) (Number, error) { return bigResult(new(big.Int).Neg(x)) })
	unInt(atomPlus, func(x *big.Int) (Number, error) { return bigResult(x) })
	unInt(atomAbs, func(x *big.Int) (Number, error) { return bigResult(new(big.Int).Abs(x)) })
	unInt(atomSign, func(x *big.Int) (Number, error) { return Integer(x.Sign()), nil })
	unInt(atomBackSlash, func(x *big.Int) (Number, error) { return bigResult(new(big.Int).Not(x)) })
	unInt(atomFloat, func(x *big.Int) (Number, error) { return floatResult(new(big.Float).SetInt(x)) })
	unInt(atomMsb, func(x *big.Int) (Number, error) {
		if x.Sign() <= 0 {
			return nil, exceptionalValueUndefined
		}
		return Integer(x.BitLen() - 1), nil
	})
	for _, name := range []Atom{atomFloor, atomTruncate, atomRound, atomCeiling} {
		unaryFunctors[name] = floatToBig(name, unaryFunctors[name])
	}
	for _, name := range []Atom{atomSqrt, atomSin, atomCos, atomTan, atomAsin, atomAcos, atomAtan, atomExp, atomLog} {
		unInt(name, nil)
	}
}

var (
	atomGcd = NewAtom("gcd")
	atomMsb = NewAtom("msb")
)

// gcd is gcd(X, Y) on Integers (the big case is bigBinary's).
func gcd(x, y Number) (Number, error) {
	a, ok := x.(Integer)
	if !ok {
		return nil, typeError(validTypeInteger, x, nil)
	}
	b, ok := y.(Integer)
	if !ok {
		return nil, typeError(validTypeInteger, y, nil)
	}
	if a == minInt || b == minInt {
		return nil, exceptionalValueIntOverflow
	}
	if a < 0 {
		a = -a
	}
	if b < 0 {
		b = -b
	}
	for b != 0 {
		a, b = b, a%b
	}
	return a, nil
}

// msb is the index of the most significant bit of a positive integer.
func msb(x Number) (Number, error) {
	n, ok := x.(Integer)
	if !ok {
		return nil, typeError(validTypeInteger, x, nil)
	}
	if n <= 0 {
		return nil, exceptionalValueUndefined
	}
	return Integer(bits.Len64(uint64(n)) - 1), nil
}

// errBigTooLarge is the error of an integer result over maxBigBits; eval
// makes it resource_error(memory) in the builtin's context.
var errBigTooLarge = errors.New("integer too large")

// bigOf returns integer n as a big.Int.
func bigOf(n Number) (*big.Int, bool) {
	switch n := n.(type) {
	case Integer:
		return big.NewInt(int64(n)), true
	case *BigInt:
		return &n.v, true
	}
	return nil, false
}

// bigResult normalizes r: an Integer when it fits.
func bigResult(r *big.Int) (Number, error) {
	if r.BitLen() > maxBigBits {
		return nil, errBigTooLarge
	}
	return NewBigInt(r), nil
}

// floatResult converts r to a Float, or float_overflow.
func floatResult(r *big.Float) (Number, error) {
	f, _ := r.Float64()
	if math.IsInf(f, 0) {
		return nil, exceptionalValueFloatOverflow
	}
	return Float(f), nil
}

// asFloatNumber returns n as a Float when it is a big integer.
func asFloatNumber(n Number) (Number, error) {
	if b, ok := n.(*BigInt); ok {
		return floatResult(new(big.Float).SetInt(&b.v))
	}
	return n, nil
}

// bigBinary wraps f. intOnly says the functor takes integers only: a
// float operand is its type error, as f reports it.
func bigBinary(f func(x, y Number) (Number, error), bf func(x, y *big.Int) (Number, error), intOnly bool) func(x, y Number) (Number, error) {
	return func(x, y Number) (Number, error) {
		_, bx := x.(*BigInt)
		_, by := y.(*BigInt)
		if !bx && !by {
			r, err := f(x, y)
			if err != exceptionalValueIntOverflow || bf == nil {
				return r, err
			}
		}
		xi, okx := bigOf(x)
		yi, oky := bigOf(y)
		if !okx || !oky || bf == nil {
			if intOnly {
				for _, n := range []Number{x, y} {
					if _, ok := n.(Float); ok {
						return nil, typeError(validTypeInteger, n, nil)
					}
				}
			}
			fx, err := asFloatNumber(x)
			if err != nil {
				return nil, err
			}
			fy, err := asFloatNumber(y)
			if err != nil {
				return nil, err
			}
			return f(fx, fy)
		}
		return bf(xi, yi)
	}
}

// bigUnary wraps f as bigBinary does; a nil bf takes a big integer as a
// float.
func bigUnary(f func(x Number) (Number, error), bf func(x *big.Int) (Number, error)) func(x Number) (Number, error) {
	return func(x Number) (Number, error) {
		if _, big := x.(*BigInt); !big {
			r, err := f(x)
			if err != exceptionalValueIntOverflow || bf == nil {
				return r, err
			}
		}
		if bf == nil {
			fx, err := asFloatNumber(x)
			if err != nil {
				return nil, err
			}
			return f(fx)
		}
		xi, _ := bigOf(x)
		return bf(xi)
	}
}

// floatToBig wraps floor/truncate/round/ceiling: a float out of the
// int64 range gives a big integer.
func floatToBig(name Atom, f func(x Number) (Number, error)) func(x Number) (Number, error) {
	return func(x Number) (Number, error) {
		r, err := f(x)
		if err != exceptionalValueIntOverflow {
			return r, err
		}
		v := float64(x.(Float))
		switch name {
		case atomFloor:
			v = math.Floor(v)
		case atomTruncate:
			v = math.Trunc(v)
		case atomRound:
			v = math.Round(v)
		case atomCeiling:
			v = math.Ceil(v)
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, exceptionalValueUndefined
		}
		i, _ := big.NewFloat(v).Int(nil)
		return bigResult(i)
	}
}

// bigShift shifts x by y bits: to the left when dir is 1 (a negative
// shift goes the other way, as in SWI-Prolog).
func bigShift(x, y *big.Int, dir int64) (Number, error) {
	s := new(big.Int).Mul(y, big.NewInt(dir))
	if s.Sign() >= 0 {
		if x.Sign() == 0 {
			return Integer(0), nil
		}
		if !s.IsInt64() || s.Int64() > maxBigBits {
			return nil, errBigTooLarge
		}
		return bigResult(new(big.Int).Lsh(x, uint(s.Int64())))
	}
	s.Neg(s)
	if !s.IsInt64() || s.Int64() > int64(x.BitLen()) {
		if x.Sign() < 0 {
			return Integer(-1), nil
		}
		return Integer(0), nil
	}
	return bigResult(new(big.Int).Rsh(x, uint(s.Int64())))
}

// bigPower is X ^ Y on integers: exact, with ISO's rules for a negative
// exponent (1 and -1 only; 0 is undefined, others a type error).
func bigPower(x, y *big.Int) (Number, error) {
	if y.Sign() < 0 {
		switch {
		case x.Sign() == 0:
			return nil, exceptionalValueUndefined
		case x.IsInt64() && x.Int64() == 1:
			return Integer(1), nil
		case x.IsInt64() && x.Int64() == -1:
			if y.Bit(0) == 0 {
				return Integer(1), nil
			}
			return Integer(-1), nil
		default:
			return nil, typeError(validTypeFloat, NewBigInt(x), nil)
		}
	}
	if x.BitLen() > 1 && (!y.IsInt64() || int64(x.BitLen()-1)*y.Int64() > maxBigBits) {
		return nil, errBigTooLarge
	}
	return bigResult(new(big.Int).Exp(x, y, nil))
}
