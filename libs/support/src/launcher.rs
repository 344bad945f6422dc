//! Whether this process was started by an MPI launcher (`mpiexec`, `mpirun`, `srun` with PMI),
//! told by the environment the launchers give each rank, so that a build without MPI support
//! refuses to run as N independent copies of the whole job (each writing the same output
//! folder) instead of one job over N ranks.

/// Variables giving the number of ranks of the job: MPICH and Intel MPI (Hydra's PMI), Open
/// MPI, and the ranks on this host (Hydra).
pub const SIZE_VARS: &[&str] = &["PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS"];

/// Variables giving this process's rank: PMI, Open MPI, PMIx, Hydra (on this host).
pub const RANK_VARS: &[&str] = &[
    "PMI_RANK",
    "OMPI_COMM_WORLD_RANK",
    "PMIX_RANK",
    "MPI_LOCALRANKID",
];

/// What the launcher's environment says: the variable that told, as `NAME=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launched {
    pub evidence: String,
}

/// Whether the environment `vars` (name, value) is that of one rank of a job of several: a
/// size variable above 1, or a rank variable with no size variable to say the job has one
/// rank. `None` for a plain start, or a launcher's single process.
pub fn launched_as_several<'a>(
    vars: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Option<Launched> {
    let vars: Vec<(&str, &str)> = vars.into_iter().collect();
    let get = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| vars.iter().find(|(k, _)| k == n).copied())
    };
    if let Some((name, value)) = get(SIZE_VARS) {
        let several = value.trim().parse::<u64>().map_or(true, |n| n > 1);
        return several.then(|| Launched {
            evidence: format!("{name}={value}"),
        });
    }
    get(RANK_VARS).map(|(name, value)| Launched {
        evidence: format!("{name}={value}"),
    })
}

/// Refuses to run under a launcher of several ranks when `app` was built without its feature
/// `mpi` (`with_mpi` false), with a message saying how to build it with MPI (README.md,
/// "Running on a cluster"). Call it first in `main`, before any output is touched.
pub fn refuse_copies_without_mpi(app: &str, with_mpi: bool) -> Result<(), String> {
    if with_mpi {
        return Ok(());
    }
    let env: Vec<(String, String)> = std::env::vars_os()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect();
    match launched_as_several(env.iter().map(|(k, v)| (k.as_str(), v.as_str()))) {
        None => Ok(()),
        Some(l) => Err(format!(
            "{app} was started by an MPI launcher ({}) but was built without MPI support: every \
             rank would run the whole job alone and write the same files. Build it with the \
             feature `mpi` (an MPI and libclang installed; README.md, \"Running on a cluster\"):\n  \
             cargo build --release -p {app} --features mpi\nor run it without mpiexec",
            l.evidence
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_ranks_are_told_by_a_size_above_one_or_a_rank_alone() {
        assert_eq!(launched_as_several([]), None);
        assert_eq!(launched_as_several([("PATH", "/bin")]), None);
        for (k, v) in [
            ("PMI_SIZE", "2"),
            ("OMPI_COMM_WORLD_SIZE", "16"),
            ("MPI_LOCALNRANKS", "3"),
            ("PMI_RANK", "0"),
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("PMIX_RANK", "5"),
            ("MPI_LOCALRANKID", "0"),
        ] {
            let l = launched_as_several([(k, v)]).unwrap_or_else(|| panic!("{k}"));
            assert_eq!(l.evidence, format!("{k}={v}"));
        }
        // A launcher's single process runs.
        assert_eq!(
            launched_as_several([("PMI_SIZE", "1"), ("PMI_RANK", "0")]),
            None
        );
        assert_eq!(
            launched_as_several([("OMPI_COMM_WORLD_SIZE", "1"), ("PMIX_RANK", "0")]),
            None
        );
    }

    #[test]
    fn a_build_with_mpi_is_never_refused() {
        assert!(refuse_copies_without_mpi("cardiac", true).is_ok());
    }
}
