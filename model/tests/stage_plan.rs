//! The per-pass table matrix in docs/algorithm.md agrees with the model: a cell is marked exactly
//! when the model's pass of that kind touches the table (cells with a footnote mark are
//! conditional and may go either way).

use horus_model::sched::Stage;
use horus_model::sched::plan::stage_plan;

const DOC: &str = include_str!("../../docs/algorithm.md");

/// `(pass name, [(marked, conditional); 14])` for every row of the matrix.
fn doc_matrix() -> Vec<(String, Vec<(bool, bool)>)> {
    let start = DOC
        .find("| pass | 0 | 1 |")
        .expect("the matrix is in docs/algorithm.md");
    DOC[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            let marks = cells[1..]
                .iter()
                .map(|c| (!c.is_empty(), c.contains(['¹', '²', '³'])))
                .collect();
            (cells[0].to_string(), marks)
        })
        .collect()
}

#[test]
fn algorithm_doc_matrix_matches_the_tables_the_model_touches() {
    let doc = doc_matrix();
    let model = stage_plan();
    assert_eq!(doc.len(), model.len(), "one matrix row per kind of pass");
    for row in &model {
        let (_, marks) = doc
            .iter()
            .find(|(name, _)| name == row.pass)
            .unwrap_or_else(|| panic!("no row for `{}`", row.pass));
        assert_eq!(marks.len(), Stage::ALL.len(), "{}", row.pass);
        for (i, stage) in Stage::ALL.iter().enumerate() {
            let touched = row.stages.contains(stage);
            let (marked, conditional) = marks[i];
            assert!(
                conditional || marked == touched,
                "`{}` ({}): docs mark {} = {marked}, the model touches it = {touched}",
                row.pass,
                row.role,
                stage.table_name()
            );
        }
    }
}
