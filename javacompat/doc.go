// Package javacompat reproduces the few pieces of Java and Jackson behaviour
// that Druid's API exposes and that every Strata plane needs, so that each has
// one implementation:
//
//   - number printing (FormatDouble, FormatFloat, AppendDouble, AppendFloat):
//     Java's Double.toString and Float.toString, which Jackson, and so Druid,
//     writes into JSON;
//   - JSON string quoting (AppendJSONString, AppendJSONStringContent): what
//     Jackson's generator writes;
//   - DoubleToLong: Java's (long) cast of a double;
//   - StringLength: Java's String.length(), in UTF-16 code units.
//
// It imports nothing from Strata, so storage, query, ingestion and control
// code can all use it.
package javacompat
