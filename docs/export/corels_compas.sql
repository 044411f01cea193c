-- Exported by glasswork 0.1.0 from run fdde22550b5b41b9b8e1de1f5d7ac142 (corels-compas, solver corels).
-- spec 55c9b7c7ad657171, data 23a14ef8bd9c7f9a
-- Trained on every row of its data (no data.where filter).
-- Reads the columns the antecedents of data:corels/compas_train.out name: sex, juvenile-crimes, priors
SELECT *,
  CASE WHEN "priors" IS NULL OR "sex" IS NULL OR "juvenile-crimes" IS NULL THEN NULL ELSE CASE
    WHEN ("sex" = 'Male' AND "juvenile-crimes" = '>0') THEN 'Yes'
    WHEN ("priors" = '>3') THEN 'Yes'
    ELSE 'No'
  END END AS "prediction",
  CASE WHEN "priors" IS NULL OR "sex" IS NULL OR "juvenile-crimes" IS NULL THEN NULL ELSE CASE
    WHEN ("sex" = 'Male' AND "juvenile-crimes" = '>0') THEN 0.28607594936708863e0
    WHEN ("priors" = '>3') THEN 0.40152477763659467e0
    ELSE 0.6606060606060606e0
  END END AS "p_No",
  CASE WHEN "priors" IS NULL OR "sex" IS NULL OR "juvenile-crimes" IS NULL THEN NULL ELSE CASE
    WHEN ("sex" = 'Male' AND "juvenile-crimes" = '>0') THEN 0.7139240506329114e0
    WHEN ("priors" = '>3') THEN 0.5984752223634053e0
    ELSE 0.3393939393939394e0
  END END AS "p_Yes"
FROM "data"
