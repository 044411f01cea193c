-- Exported by glasswork 0.1.0 from run b52db1fe5b414d4b90d3e1e048e7e8f4 (corels-compas, solver corels).
-- spec 55c9b7c7ad657171, data 23a14ef8bd9c7f9a
-- Reads the columns the antecedents of data:corels/compas_train.out name: sex, juvenile-crimes, priors
SELECT *,
  CASE
    WHEN ("sex" = 'Male' AND "juvenile-crimes" = '>0') THEN 'Yes'
    WHEN ("priors" = '>3') THEN 'Yes'
    ELSE 'No'
  END AS "prediction",
  CASE
    WHEN ("sex" = 'Male' AND "juvenile-crimes" = '>0') THEN 0.28607594936708863e0
    WHEN ("priors" = '>3') THEN 0.40152477763659467e0
    ELSE 0.6606060606060606e0
  END AS "p_No",
  CASE
    WHEN ("sex" = 'Male' AND "juvenile-crimes" = '>0') THEN 0.7139240506329114e0
    WHEN ("priors" = '>3') THEN 0.5984752223634053e0
    ELSE 0.3393939393939394e0
  END AS "p_Yes"
FROM "data"
