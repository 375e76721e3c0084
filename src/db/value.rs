//! Values as both backends exchange them: what a statement binds
//! ([`ToValue`], the [`params!`](crate::params) macro) and what a row holds
//! ([`Row`], [`FromValue`]).
//!
//! The ledger's columns are integers (instants as milliseconds, counts,
//! flags as 0/1), text (ids, states, reasons and JSON as the core writes
//! them) and the odd real. Both backends see exactly these: SQLite's
//! `INTEGER`/`TEXT`, PostgreSQL's `BIGINT`/`TEXT` (a boolean a query
//! computes, `EXISTS (...)`, reads as 0 or 1). Rows are read whole into
//! [`Value`]s, so code that reads a row is the same for both.

use super::error::SqlError;
use std::sync::Arc;

/// One bound or read value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

/// A Rust value that binds as a [`Value`].
pub trait ToValue {
    fn to_value(&self) -> Value;
}

macro_rules! int_to_value {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            fn to_value(&self) -> Value {
                Value::Int(*self as i64)
            }
        }
    )*};
}
int_to_value!(i64, i32, i16, u32, u16, u8, usize);

impl ToValue for u64 {
    fn to_value(&self) -> Value {
        Value::Int(i64::try_from(*self).unwrap_or(i64::MAX))
    }
}

impl ToValue for bool {
    fn to_value(&self) -> Value {
        Value::Int(i64::from(*self))
    }
}

impl ToValue for f64 {
    fn to_value(&self) -> Value {
        Value::Real(*self)
    }
}

impl ToValue for str {
    fn to_value(&self) -> Value {
        Value::Text(self.to_string())
    }
}

impl ToValue for String {
    fn to_value(&self) -> Value {
        Value::Text(self.clone())
    }
}

impl ToValue for Value {
    fn to_value(&self) -> Value {
        self.clone()
    }
}

impl<T: ToValue + ?Sized> ToValue for &T {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value {
        match self {
            Some(v) => v.to_value(),
            None => Value::Null,
        }
    }
}

/// The parameters of one statement, `?1`, `?2`... in order.
pub type Params<'a> = &'a [&'a dyn ToValue];

/// `params![a, b, c]`: a statement's parameters, bound as `?1`, `?2`, `?3`.
#[macro_export]
macro_rules! params {
    () => { &[] as &[&dyn $crate::db::ToValue] };
    ($($p:expr),+ $(,)?) => { &[$(&$p as &dyn $crate::db::ToValue),+] as &[&dyn $crate::db::ToValue] };
}

/// A Rust value read from a [`Value`].
pub trait FromValue: Sized {
    fn from_value(v: &Value) -> Result<Self, String>;
}

fn int_of(v: &Value) -> Result<i64, String> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Real(r) if r.fract() == 0.0 => Ok(*r as i64),
        other => Err(format!("expected an integer, found {other:?}")),
    }
}

macro_rules! int_from_value {
    ($($t:ty),*) => {$(
        impl FromValue for $t {
            fn from_value(v: &Value) -> Result<Self, String> {
                let i = int_of(v)?;
                <$t>::try_from(i).map_err(|_| format!("{i} is out of range for {}", stringify!($t)))
            }
        }
    )*};
}
int_from_value!(i64, i32, u32, u64, usize);

impl FromValue for bool {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(int_of(v)? != 0)
    }
}

impl FromValue for f64 {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Real(r) => Ok(*r),
            Value::Int(i) => Ok(*i as f64),
            other => Err(format!("expected a number, found {other:?}")),
        }
    }
}

impl FromValue for String {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Text(t) => Ok(t.clone()),
            other => Err(format!("expected text, found {other:?}")),
        }
    }
}

impl FromValue for Value {
    fn from_value(v: &Value) -> Result<Self, String> {
        Ok(v.clone())
    }
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(v: &Value) -> Result<Self, String> {
        match v {
            Value::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

/// One row of a result, read whole.
#[derive(Clone, Debug)]
pub struct Row {
    names: Arc<[String]>,
    values: Vec<Value>,
}

/// A column by position or by name.
pub trait RowIndex {
    fn index(&self, row: &Row) -> Result<usize, SqlError>;
}

impl RowIndex for usize {
    fn index(&self, row: &Row) -> Result<usize, SqlError> {
        if *self < row.values.len() {
            Ok(*self)
        } else {
            Err(SqlError::Column(format!("no column {self}")))
        }
    }
}

impl RowIndex for &str {
    fn index(&self, row: &Row) -> Result<usize, SqlError> {
        row.names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(self))
            .ok_or_else(|| SqlError::Column(format!("no column named {self:?}")))
    }
}

impl Row {
    pub(crate) fn new(names: Arc<[String]>, values: Vec<Value>) -> Row {
        Row { names, values }
    }

    /// The value of a column, converted.
    pub fn get<I: RowIndex, T: FromValue>(&self, col: I) -> Result<T, SqlError> {
        let i = col.index(self)?;
        T::from_value(&self.values[i])
            .map_err(|e| SqlError::Column(format!("column {:?}: {e}", self.names[i])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_by_name_and_position() {
        let row = Row::new(
            Arc::from(vec!["a".to_string(), "b".to_string()]),
            vec![Value::Int(1), Value::Null],
        );
        assert_eq!(row.get::<_, i64>("a").unwrap(), 1);
        assert!(row.get::<_, bool>(0).unwrap());
        assert_eq!(row.get::<_, Option<String>>("B").unwrap(), None);
        assert!(row.get::<_, String>("a").is_err());
        assert!(row.get::<_, i64>("c").is_err());
    }

    #[test]
    fn binds_options_and_flags() {
        let p: Params<'_> = crate::params![Some(3u32), None::<&str>, true, "x"];
        let v: Vec<Value> = p.iter().map(|p| p.to_value()).collect();
        assert_eq!(
            v,
            vec![
                Value::Int(3),
                Value::Null,
                Value::Int(1),
                Value::Text("x".into())
            ]
        );
    }
}
