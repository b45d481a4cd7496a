package sql

import (
	"strconv"
	"strings"
)

// Pos is a location in the source text. Line and Column are 1-based; Column counts Unicode
// code points (a tab is one column). Offset is the 0-based byte offset.
type Pos struct{ Line, Column, Offset int }

// Node is any element of the syntax tree.
type Node interface {
	Position() Pos
	// String prints the node as canonical SQL (see Format).
	String() string
}

// Statement is a complete statement: *Query, *Insert, *Replace or *Explain.
type Statement interface {
	Node
	stmtNode()
}

// QueryBody is the part of a query before ORDER BY: *Select, *SetOp, or a parenthesized *Query.
type QueryBody interface {
	Node
	bodyNode()
}

// TableExpr is an item of a FROM clause: *TableRef, *DerivedTable, *TableFunc, *Unnest or *Join.
type TableExpr interface {
	Node
	tableNode()
}

// Expr is a scalar expression.
type Expr interface {
	Node
	exprNode()
}

type node struct{ At Pos }

func (n *node) Position() Pos { return n.At }

// Ident is one identifier. Quoted records whether it was written in double quotes; identifiers
// are case-sensitive either way, and Name keeps the case as written.
type Ident struct {
	Name   string
	Quoted bool
}

// ---------------------------------------------------------------------------------------------
// Statements

// Script is a statement preceded by zero or more SET statements (see ParseScript).
type Script struct {
	node
	Sets      []*SetStmt
	Statement Statement
}

// SetStmt is "SET key = literal;", which sets a query context parameter.
type SetStmt struct {
	node
	Key   Ident
	Value Expr // a literal: *StringLit, *NumberLit (possibly negated via *UnaryExpr), *BoolLit or *NullLit
}

// Query is a full query expression: [WITH ...] body [ORDER BY ...] [LIMIT n] [OFFSET n].
type Query struct {
	node
	With    []*CTE
	Body    QueryBody
	OrderBy []*OrderItem
	Limit   Expr // *NumberLit or *Param; nil if absent
	Offset  Expr // *NumberLit or *Param; nil if absent
}

// CTE is one "name [(columns)] AS (query)" entry of a WITH clause.
type CTE struct {
	node
	Name    Ident
	Columns []Ident
	Query   *Query
}

// Select is one SELECT block.
type Select struct {
	node
	Distinct bool
	Columns  []*SelectItem
	From     TableExpr // nil when there is no FROM
	Where    Expr
	GroupBy  []Expr // ordinals stay *NumberLit
	Having   Expr
	Windows  []*NamedWindow
}

// SelectItem is one entry of the select list. Expr is a *StarExpr for "*" and "t.*".
type SelectItem struct {
	node
	Expr  Expr
	Alias *Ident
}

// SetOpKind is a set operator.
type SetOpKind uint8

const (
	Union SetOpKind = iota
	Intersect
	Except
)

var setOpNames = [...]string{Union: "UNION", Intersect: "INTERSECT", Except: "EXCEPT"}

func (k SetOpKind) String() string { return setOpNames[k] }

// SetOp combines two query bodies: "left UNION ALL right" and similar.
type SetOp struct {
	node
	Op          SetOpKind
	All         bool
	Left, Right QueryBody
}

// OrderItem is "expr [ASC|DESC] [NULLS FIRST|LAST]".
type OrderItem struct {
	node
	Expr  Expr
	Desc  bool
	Nulls NullsOrder
}

// NullsOrder is an explicit NULLS FIRST / NULLS LAST.
type NullsOrder uint8

const (
	NullsDefault NullsOrder = iota
	NullsFirst
	NullsLast
)

// Insert is "INSERT INTO target query PARTITIONED BY g [CLUSTERED BY ...]".
// Exactly one of Table and Export is set.
type Insert struct {
	node
	Table         []Ident // target datasource, possibly qualified (druid.t)
	Export        *Export
	Source        *Query
	PartitionedBy *Granularity // required for a table target; optional for an export
	ClusteredBy   []Expr
}

// Replace is "REPLACE INTO target OVERWRITE (ALL | WHERE cond) query PARTITIONED BY g [CLUSTERED BY ...]".
type Replace struct {
	node
	Table          []Ident
	Export         *Export
	OverwriteWhere Expr // nil means OVERWRITE ALL
	Source         *Query
	PartitionedBy  *Granularity
	ClusteredBy    []Expr
}

// Export is the "EXTERN(dest(name => 'value', ...)) AS format" target of an export statement.
type Export struct {
	node
	Destination Ident
	Properties  []ExportProperty
	Format      Ident
}

// ExportProperty is one "name => 'value'" argument of an export destination.
type ExportProperty struct {
	Name  Ident
	Value string
}

// Explain is "EXPLAIN PLAN FOR statement".
type Explain struct {
	node
	Statement Statement
}

// GranularityForm records how a PARTITIONED BY granularity was written.
type GranularityForm uint8

const (
	GranKeyword   GranularityForm = iota // HOUR, DAY, MONTH, YEAR
	GranAll                              // ALL or ALL TIME
	GranString                           // 'P1D', 'PT1H', 'DAY'
	GranTimeFloor                        // TIME_FLOOR(__time, 'PT1H')
	GranFloor                            // FLOOR(__time TO unit)
)

// Granularity is the argument of PARTITIONED BY.
type Granularity struct {
	node
	Form    GranularityForm
	Unit    TimeUnit // GranKeyword and GranFloor
	Literal string   // GranString and GranTimeFloor: the string literal as written
	// Period is the ISO-8601 period the granularity stands for (e.g. "P1D"); empty for ALL.
	Period string
}

// IsAll reports whether the granularity is ALL (one time chunk for all data).
func (g *Granularity) IsAll() bool { return g.Period == "" }

// ---------------------------------------------------------------------------------------------
// FROM items

// TableRef names a table, possibly qualified: druid.wikipedia, lookup.countries.
type TableRef struct {
	node
	Name          []Ident
	Alias         *Ident
	ColumnAliases []Ident
}

// DerivedTable is a parenthesized sub-query in FROM.
type DerivedTable struct {
	node
	Lateral       bool
	Query         *Query
	Alias         *Ident
	ColumnAliases []Ident
}

// TableFunc is "TABLE(fn(args)) [EXTEND] (col TYPE, ...)", e.g. TABLE(EXTERN(...)). Extend is
// the column list that declares the external schema; nil when absent (for example with the
// older three-argument EXTERN whose third argument is the signature).
type TableFunc struct {
	node
	Call          *FuncCall
	Extend        []*ColumnDef
	Alias         *Ident
	ColumnAliases []Ident
}

// IsExtern reports whether the table function is EXTERN.
func (t *TableFunc) IsExtern() bool {
	return !t.Call.Name.Quoted && strings.EqualFold(t.Call.Name.Name, "EXTERN")
}

// Unnest is "UNNEST(expr) [AS alias (column)]".
type Unnest struct {
	node
	Expr          Expr
	Alias         *Ident
	ColumnAliases []Ident
}

// JoinKind is the kind of a join.
type JoinKind uint8

const (
	JoinComma JoinKind = iota // FROM a, b
	JoinInner                 // [INNER] JOIN
	JoinLeft                  // LEFT [OUTER] JOIN
	JoinRight                 // RIGHT [OUTER] JOIN
	JoinFull                  // FULL [OUTER] JOIN
	JoinCross                 // CROSS JOIN
)

var joinNames = [...]string{JoinComma: ",", JoinInner: "INNER JOIN", JoinLeft: "LEFT JOIN",
	JoinRight: "RIGHT JOIN", JoinFull: "FULL JOIN", JoinCross: "CROSS JOIN"}

func (k JoinKind) String() string { return joinNames[k] }

// Join joins two FROM items. At most one of On and Using is set.
type Join struct {
	node
	Kind        JoinKind
	Natural     bool
	Left, Right TableExpr
	On          Expr
	Using       []Ident
}

// ColumnDef declares a column in an EXTEND list: "name TYPE".
type ColumnDef struct {
	node
	Name Ident
	Type *DataType
}

// DataType is a SQL type as written in CAST or EXTEND.
type DataType struct {
	node
	// Name is the upper-cased type name ("VARCHAR", "BIGINT", "TIMESTAMP", "DOUBLE"); multi-word
	// spellings are normalised (DOUBLE PRECISION → DOUBLE, CHARACTER VARYING → VARCHAR). For
	// Druid's TYPE('COMPLEX<json>') it is "TYPE" and Complex holds the quoted name.
	Name              string
	Params            []int // precision / scale: VARCHAR(10), DECIMAL(10, 2)
	Complex           string
	WithLocalTimeZone bool // TIMESTAMP WITH LOCAL TIME ZONE
	ArrayDepth        int  // 1 for "VARCHAR ARRAY" or ARRAY<VARCHAR>
}

// ---------------------------------------------------------------------------------------------
// Windows

// NamedWindow is one "name AS (spec)" entry of a WINDOW clause.
type NamedWindow struct {
	node
	Name Ident
	Spec *WindowSpec
}

// WindowSpec is the window of an OVER clause. For "OVER w", only Ref is set.
type WindowSpec struct {
	node
	Ref         *Ident
	PartitionBy []Expr
	OrderBy     []*OrderItem
	Frame       *WindowFrame
}

// WindowFrame is "ROWS|RANGE [BETWEEN] start [AND end]". End is nil without BETWEEN.
type WindowFrame struct {
	Range      bool // RANGE rather than ROWS
	Start, End *FrameBound
}

// FrameBoundKind is the kind of a window frame bound.
type FrameBoundKind uint8

const (
	UnboundedPreceding FrameBoundKind = iota
	Preceding
	CurrentRow
	Following
	UnboundedFollowing
)

// FrameBound is one end of a window frame; Offset is set for Preceding and Following.
type FrameBound struct {
	Kind   FrameBoundKind
	Offset Expr
}

// ---------------------------------------------------------------------------------------------
// Expressions

// ColumnRef is a possibly-qualified column name: page, t.page, "t"."page".
type ColumnRef struct {
	node
	Parts []Ident
}

// Column returns the last part of the name (the column itself).
func (c *ColumnRef) Column() Ident { return c.Parts[len(c.Parts)-1] }

// StarExpr is "*" or "t.*" in a select list, or the "*" of COUNT(*).
type StarExpr struct {
	node
	Qualifier []Ident
}

// NumberLit is a numeric literal, kept as written. Exact numbers have no exponent; Integer
// numbers have no decimal point either.
type NumberLit struct {
	node
	Text string
}

// IsInteger reports whether the literal has neither a decimal point nor an exponent.
func (n *NumberLit) IsInteger() bool { return isDigits(n.Text) }

// Int64 returns the value of an integer literal.
func (n *NumberLit) Int64() (int64, error) { return strconv.ParseInt(n.Text, 10, 64) }

// Float64 returns the value of the literal as a float64.
func (n *NumberLit) Float64() (float64, error) { return strconv.ParseFloat(n.Text, 64) }

// StringLit is a character string literal; Value has doubled quotes already collapsed.
type StringLit struct {
	node
	Value string
}

// BoolLit is TRUE or FALSE.
type BoolLit struct {
	node
	Value bool
}

// NullLit is NULL.
type NullLit struct{ node }

// TypedLitKind selects the type of a TypedLit.
type TypedLitKind uint8

const (
	TimestampLit TypedLitKind = iota
	DateLit
	TimeLit
)

var typedLitNames = [...]string{TimestampLit: "TIMESTAMP", DateLit: "DATE", TimeLit: "TIME"}

func (k TypedLitKind) String() string { return typedLitNames[k] }

// TypedLit is TIMESTAMP '2000-01-01 00:00:00', DATE '2000-01-01' or TIME '12:00:00'.
type TypedLit struct {
	node
	Kind  TypedLitKind
	Value string
}

// IntervalLit is INTERVAL [-]'value' unit [TO unit], e.g. INTERVAL '1' DAY.
type IntervalLit struct {
	node
	Negative bool
	Value    string
	Unit     TimeUnit
	ToUnit   TimeUnit // UnitNone unless "unit TO unit"
}

// ArrayLit is ARRAY[e1, e2, ...].
type ArrayLit struct {
	node
	Elems []Expr
}

// Param is a "?" dynamic parameter; Index counts parameters from 0 in source order.
type Param struct {
	node
	Index int
}

// BinaryOp is a binary operator.
type BinaryOp uint8

const (
	OpOr BinaryOp = iota
	OpAnd
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpIsDistinctFrom
	OpIsNotDistinctFrom
	OpAdd
	OpSub
	OpMul
	OpDiv
	OpMod
	OpConcat
)

var binaryOpNames = [...]string{OpOr: "OR", OpAnd: "AND", OpEq: "=", OpNe: "<>", OpLt: "<", OpLe: "<=",
	OpGt: ">", OpGe: ">=", OpIsDistinctFrom: "IS DISTINCT FROM", OpIsNotDistinctFrom: "IS NOT DISTINCT FROM",
	OpAdd: "+", OpSub: "-", OpMul: "*", OpDiv: "/", OpMod: "%", OpConcat: "||"}

func (o BinaryOp) String() string { return binaryOpNames[o] }

// BinaryExpr is "left op right".
type BinaryExpr struct {
	node
	Op          BinaryOp
	Left, Right Expr
}

// UnaryOp is a prefix operator.
type UnaryOp uint8

const (
	OpNot UnaryOp = iota
	OpNeg
	OpPlus
)

// UnaryExpr is NOT x, -x or +x.
type UnaryExpr struct {
	node
	Op UnaryOp
	X  Expr
}

// IsKind is what an IS test checks for.
type IsKind uint8

const (
	IsNull IsKind = iota
	IsTrue
	IsFalse
	IsUnknown
)

var isNames = [...]string{IsNull: "NULL", IsTrue: "TRUE", IsFalse: "FALSE", IsUnknown: "UNKNOWN"}

func (k IsKind) String() string { return isNames[k] }

// IsExpr is "x IS [NOT] NULL|TRUE|FALSE|UNKNOWN".
type IsExpr struct {
	node
	X    Expr
	Not  bool
	What IsKind
}

// BetweenExpr is "x [NOT] BETWEEN [SYMMETRIC] low AND high".
type BetweenExpr struct {
	node
	X, Low, High Expr
	Not          bool
	Symmetric    bool
}

// InExpr is "x [NOT] IN (list)" or "x [NOT] IN (query)"; exactly one of List and Query is set.
type InExpr struct {
	node
	X     Expr
	Not   bool
	List  []Expr
	Query *Query
}

// LikeExpr is "x [NOT] LIKE pattern [ESCAPE esc]" (or SIMILAR TO when Similar is set).
type LikeExpr struct {
	node
	X, Pattern Expr
	Escape     Expr
	Not        bool
	Similar    bool
}

// CaseExpr is a simple (Operand set) or searched CASE expression.
type CaseExpr struct {
	node
	Operand Expr
	Whens   []*When
	Else    Expr
}

// When is one "WHEN cond THEN result" arm of a CASE.
type When struct {
	node
	Cond, Result Expr
}

// CastExpr is CAST(x AS type).
type CastExpr struct {
	node
	X    Expr
	Type *DataType
}

// FuncCall is a function call: name([DISTINCT] args) [FILTER (WHERE cond)] [OVER window].
// COUNT(*) has a single *StarExpr argument. Named arguments (name => value) appear as *NamedArg.
// Niladic is set for CURRENT_TIMESTAMP and the like written without parentheses.
type FuncCall struct {
	node
	Name     Ident
	Distinct bool
	Args     []Expr
	Filter   Expr
	Over     *WindowSpec
	Niladic  bool
}

// NamedArg is a "name => value" function argument.
type NamedArg struct {
	node
	Name  Ident
	Value Expr
}

// FloorCeilExpr is FLOOR(x TO unit) or CEIL(x TO unit). FLOOR(x) without a unit is a FuncCall.
type FloorCeilExpr struct {
	node
	Ceil bool
	X    Expr
	Unit TimeUnit
}

// ExtractExpr is EXTRACT(unit FROM x).
type ExtractExpr struct {
	node
	Unit TimeUnit
	X    Expr
}

// TimestampArith is TIMESTAMPADD(unit, count, ts) (Diff false) or TIMESTAMPDIFF(unit, ts1, ts2).
type TimestampArith struct {
	node
	Diff bool
	Unit TimeUnit
	A, B Expr
}

// PositionExpr is POSITION(sub IN str [FROM start]).
type PositionExpr struct {
	node
	Sub, Str Expr
	From     Expr
}

// TrimSide is the side a TRIM removes characters from.
type TrimSide uint8

const (
	TrimBoth TrimSide = iota
	TrimLeading
	TrimTrailing
)

var trimNames = [...]string{TrimBoth: "BOTH", TrimLeading: "LEADING", TrimTrailing: "TRAILING"}

func (s TrimSide) String() string { return trimNames[s] }

// TrimExpr is TRIM([BOTH|LEADING|TRAILING] [chars] FROM x) or TRIM(x). Chars is nil for spaces.
type TrimExpr struct {
	node
	Side  TrimSide
	Chars Expr
	X     Expr
}

// SubstringExpr is SUBSTRING(x FROM start [FOR length]); the comma form is a plain FuncCall.
type SubstringExpr struct {
	node
	X, From, For Expr
}

// SubqueryExpr is a parenthesized query used as a scalar value.
type SubqueryExpr struct {
	node
	Query *Query
}

// ExistsExpr is EXISTS (query).
type ExistsExpr struct {
	node
	Query *Query
}

// IndexExpr is x[index] (array element access).
type IndexExpr struct {
	node
	X, Index Expr
}

// ---------------------------------------------------------------------------------------------
// Interface membership

func (*Query) stmtNode()   {}
func (*Insert) stmtNode()  {}
func (*Replace) stmtNode() {}
func (*Explain) stmtNode() {}

func (*Select) bodyNode() {}
func (*SetOp) bodyNode()  {}
func (*Query) bodyNode()  {}

func (*TableRef) tableNode()     {}
func (*DerivedTable) tableNode() {}
func (*TableFunc) tableNode()    {}
func (*Unnest) tableNode()       {}
func (*Join) tableNode()         {}

func (*ColumnRef) exprNode()      {}
func (*StarExpr) exprNode()       {}
func (*NumberLit) exprNode()      {}
func (*StringLit) exprNode()      {}
func (*BoolLit) exprNode()        {}
func (*NullLit) exprNode()        {}
func (*TypedLit) exprNode()       {}
func (*IntervalLit) exprNode()    {}
func (*ArrayLit) exprNode()       {}
func (*Param) exprNode()          {}
func (*BinaryExpr) exprNode()     {}
func (*UnaryExpr) exprNode()      {}
func (*IsExpr) exprNode()         {}
func (*BetweenExpr) exprNode()    {}
func (*InExpr) exprNode()         {}
func (*LikeExpr) exprNode()       {}
func (*CaseExpr) exprNode()       {}
func (*CastExpr) exprNode()       {}
func (*FuncCall) exprNode()       {}
func (*NamedArg) exprNode()       {}
func (*FloorCeilExpr) exprNode()  {}
func (*ExtractExpr) exprNode()    {}
func (*TimestampArith) exprNode() {}
func (*PositionExpr) exprNode()   {}
func (*TrimExpr) exprNode()       {}
func (*SubstringExpr) exprNode()  {}
func (*SubqueryExpr) exprNode()   {}
func (*ExistsExpr) exprNode()     {}
func (*IndexExpr) exprNode()      {}
